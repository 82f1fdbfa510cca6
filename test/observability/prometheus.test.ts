/**
 * A real Prometheus server (Debian's `prometheus` package) scrapes the gateway's metrics endpoint
 * (the CLI, `switchboard run`) and a PromQL query returns the token usage of the LLM requests the
 * official openai client just made through the gateway, by model and token type. Skipped with the
 * install command when the binary is not on PATH (.ci/run installs it, so CI never skips).
 */
import assert from 'node:assert/strict';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import OpenAI from 'openai';
import { startCli, type CliProcess } from '../support/cli.ts';
import { closedPort } from '../support/fleet.ts';
import { gateway, gatewayClass } from '../support/manifests.ts';
import { keyedAiBackend, keysSecret } from '../llm/gateway-yaml.ts';
import { startMockProvider, type MockProvider } from '../llm/mock-provider.ts';

const PROMETHEUS = spawnSync('which', ['prometheus']).status === 0;
const SKIP = PROMETHEUS ? false : 'prometheus is not installed: apt-get update && apt-get install -y prometheus';

interface PromVector { metric: Record<string, string>; value: [number, string] }

describe('Prometheus scrapes the gateway: token usage of the requests just made', { skip: SKIP }, () => {
  let dir: string;
  let provider: MockProvider;
  let cli: CliProcess;
  let prometheus: ChildProcess | undefined;
  let prometheusPort: number;
  let gatewayPort: number;
  let prometheusOutput = '';

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'switchboard-prometheus-'));
    provider = await startMockProvider();
    gatewayPort = await closedPort();
    writeFileSync(join(dir, 'gateway.yaml'), gatewayClass() + gateway('gw', [{ name: 'http', port: gatewayPort }]) + `---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: { name: llm }
spec:
  parentRefs: [{ name: gw }]
  rules:
    - matches: [{ path: { type: PathPrefix, value: /openai } }]
      backendRefs: [{ group: switchboard.dev, kind: ProxyBackend, name: openai }]
---
${keysSecret({ openai: 'sk-openai' })}---
${keyedAiBackend('openai', 'providerA: {}', provider)}`);
    cli = await startCli(dir);
    await cli.waitFor('the gateway to be ready', async () => (await cli.admin('/healthz/ready')).status === 200);

    prometheusPort = await closedPort();
    writeFileSync(join(dir, 'prometheus.yml'), `global: { scrape_interval: 1s, evaluation_interval: 1s }
scrape_configs:
  - job_name: switchboard
    static_configs: [{ targets: ['127.0.0.1:${cli.metricsPort}'] }]
`);
    prometheus = spawn('prometheus', [
      `--config.file=${join(dir, 'prometheus.yml')}`, `--storage.tsdb.path=${join(dir, 'data')}`,
      `--web.listen-address=127.0.0.1:${prometheusPort}`,
    ], { stdio: ['ignore', 'pipe', 'pipe'] });
    prometheus.stdout?.on('data', (c: Buffer) => { prometheusOutput += c.toString(); });
    prometheus.stderr?.on('data', (c: Buffer) => { prometheusOutput += c.toString(); });
  });

  after(async () => {
    prometheus?.kill('SIGTERM');
    if (prometheus && prometheus.exitCode === null) await new Promise((ok) => prometheus?.once('exit', ok));
    await cli?.stop();
    await provider?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  async function query(promql: string): Promise<PromVector[]> {
    const res = await fetch(`http://127.0.0.1:${prometheusPort}/api/v1/query?query=${encodeURIComponent(promql)}`);
    const body = (await res.json()) as { status: string; data: { result: PromVector[] } };
    assert.equal(body.status, 'success');
    return body.data.result;
  }

  it('sum by model and token type of gen_ai_client_token_usage_sum is the usage the provider reported', async () => {
    const openai = new OpenAI({ apiKey: 'client-key', baseURL: `http://127.0.0.1:${gatewayPort}/openai/v1`, maxRetries: 0 });
    for (const [i, usage] of [[11, 2], [20, 5]].entries()) {
      provider.answer('/v1/chat/completions', {
        status: 200,
        body: {
          id: `chatcmpl-p${i}`, object: 'chat.completion', created: 1731000000, model: 'gpt-4o-mini',
          choices: [{ index: 0, message: { role: 'assistant', content: 'Hi' }, finish_reason: 'stop' }],
          usage: { prompt_tokens: usage[0], completion_tokens: usage[1], total_tokens: usage[0] + usage[1] },
        },
      });
      const r = await openai.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'Hello' }] });
      assert.equal(r.choices[0].message.content, 'Hi');
    }
    const promql = 'sum by (gen_ai_request_model, gen_ai_token_type) (gen_ai_client_token_usage_sum{gen_ai_operation_name="chat"})';
    let result: PromVector[] = [];
    const deadline = Date.now() + 30_000;
    while (Date.now() < deadline) {
      result = await query(promql).catch(() => []);
      if (result.length === 2 && result.every((r) => r.metric.gen_ai_token_type === 'input' ? r.value[1] === '31' : r.value[1] === '7')) break;
      await new Promise((ok) => setTimeout(ok, 500));
    }
    const byType = Object.fromEntries(result.map((r) => [r.metric.gen_ai_token_type, [r.metric.gen_ai_request_model, Number(r.value[1])]]));
    assert.deepEqual(byType, { input: ['gpt-4o-mini', 31], output: ['gpt-4o-mini', 7] }, `prometheus output:\n${prometheusOutput.slice(-2000)}`);
    const requests = await query('sum(switchboard_requests_total{route="default/llm"})');
    assert.equal(requests[0]?.value[1], '2');
  });
});
