/**
 * frontend `accessLog` sees every CEL variable the request earned, through a gateway and the
 * official openai client: the API key the route's policy accepted (`apiKey.name`) and the LLM facts
 * (`llm.provider`, `llm.requestModel`, `llm.responseModel`, token counts, `llm.streaming`), in the
 * filter and the added attributes, for buffered and streamed requests; requests that earned none
 * of them drop only those pairs. An MCP SDK client's tools/call logs `mcp.method`, `mcp.target`
 * and `mcp.tool.name`.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import OpenAI from 'openai';
import { createLogger } from '../../src/common/logger.ts';
import { startGateway, type GatewayHarness } from '../support/gateway.ts';
import { llmGatewayYaml, ROUTES } from '../llm/gateway-yaml.ts';
import { startMockProvider, streamFixture, type MockProvider } from '../llm/mock-provider.ts';
import { httpGateway, mcpToolsBackend } from '../support/manifests.ts';
import { connect, startEverything, type Upstream } from '../mcp/support.ts';

/** The access log lines (msg "request") the runtime wrote, parsed. */
function captureLog(): { logger: ReturnType<typeof createLogger>; requests(): Record<string, unknown>[] } {
  const lines: string[] = [];
  const logger = createLogger({ format: 'json', destination: { write: (line: string) => void lines.push(line) } });
  return { logger, requests: () => lines.map((l) => JSON.parse(l) as Record<string, unknown>).filter((l) => l.msg === 'request') };
}

/** pino writes synchronously to our destination; the line follows the response by a tick or two. */
async function settle(): Promise<void> {
  await new Promise((resolve) => setTimeout(resolve, 50));
}

describe('accessLog CEL: apiKey and llm.* on the line', () => {
  let provider: MockProvider;
  let gw: GatewayHarness;
  const log = captureLog();

  before(async () => {
    provider = await startMockProvider();
    gw = await startGateway(llmGatewayYaml([{ name: 'openai', prefix: '/openai' }], `
apiVersion: v1
kind: Secret
metadata: { name: keys }
stringData: { Authorization: "Bearer sk-openai" }
---
apiVersion: v1
kind: Secret
metadata: { name: client-keys }
stringData: { team-blue: sk-blue }
---
apiVersion: switchboard.dev/v1alpha1
kind: ProxyBackend
metadata: { name: openai }
spec:
  ai:
    provider: { providerA: {}, host: ${provider.host}, port: ${provider.port} }
  policies:
    auth: { secretRef: { name: keys } }
    ai: { routes: ${ROUTES} }
---
apiVersion: switchboard.dev/v1alpha1
kind: ProxyPolicy
metadata: { name: keyed }
spec:
  targetRefs: [{ group: gateway.networking.k8s.io, kind: HTTPRoute, name: llm }]
  traffic:
    apiKeyAuthentication: { secretRef: { name: client-keys } }
---
apiVersion: switchboard.dev/v1alpha1
kind: ProxyPolicy
metadata: { name: logged }
spec:
  targetRefs: [{ group: gateway.networking.k8s.io, kind: Gateway, name: gw }]
  frontend:
    accessLog:
      filter: 'request.path != "/skip"'
      attributes:
        remove: [bytes]
        add:
          - { name: key, expression: apiKey.name }
          - { name: provider, expression: llm.provider }
          - { name: model, expression: llm.requestModel }
          - { name: responseModel, expression: llm.responseModel }
          - { name: tokens, expression: 'llm.inputTokens + llm.outputTokens' }
          - { name: streaming, expression: llm.streaming }
`), { logger: log.logger });
    assert.deepEqual(gw.applyErrors, []);
  });

  after(async () => {
    await gw?.close();
    await provider?.stop();
  });

  const openai = (key = 'sk-blue') => new OpenAI({ apiKey: key, baseURL: gw.url(80, '/openai/v1'), maxRetries: 0 });

  it('a buffered request: the key, provider, both models and token counts', async () => {
    provider.answer('/v1/chat/completions', {
      status: 200,
      body: { id: 'c1', object: 'chat.completion', created: 1, model: 'gpt-4o-2024-08-06', choices: [{ index: 0, message: { role: 'assistant', content: 'Hi' }, finish_reason: 'stop' }], usage: { prompt_tokens: 11, completion_tokens: 4, total_tokens: 15 } },
    });
    const before = log.requests().length;
    await openai().chat.completions.create({ model: 'gpt-4o', messages: [{ role: 'user', content: 'Hello' }] });
    await settle();
    const line = log.requests().slice(before).at(-1);
    assert.ok(line, 'an access log line');
    assert.equal(line.status, 200);
    assert.equal(line.bytes, undefined, 'removed');
    assert.equal(line.key, 'team-blue');
    assert.equal(line.provider, 'default');
    assert.equal(line.model, 'gpt-4o');
    assert.equal(line.responseModel, 'gpt-4o-2024-08-06');
    assert.equal(line.tokens, 15);
    assert.equal(line.streaming, false);
  });

  it('a streamed request: streaming is true and the streamed answer names the response model', async () => {
    provider.answer('/v1/chat/completions', streamFixture('openai-tool-calls'));
    const before = log.requests().length;
    const stream = await openai().chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'Hello' }], stream: true });
    for await (const _chunk of stream) { /* drain */ }
    await settle();
    const line = log.requests().slice(before).at(-1);
    assert.ok(line, 'an access log line');
    assert.equal(line.key, 'team-blue');
    assert.equal(line.model, 'gpt-4o-mini');
    assert.equal(line.streaming, true);
    assert.equal(typeof line.responseModel, 'string');
  });

  it('a refused key earns no apiKey and no llm: those pairs drop, the line stays', async () => {
    const before = log.requests().length;
    await assert.rejects(openai('sk-wrong').chat.completions.create({ model: 'gpt-4o', messages: [{ role: 'user', content: 'Hello' }] }), { status: 401 });
    await settle();
    const line = log.requests().slice(before).at(-1);
    assert.ok(line, 'an access log line');
    assert.equal(line.status, 401);
    assert.equal(line.key, undefined);
    assert.equal(line.model, undefined);
    assert.equal(line.tokens, undefined);
  });
});

describe('accessLog CEL: mcp.* on the line', () => {
  let everything: Upstream;
  let gw: GatewayHarness;
  const log = captureLog();

  before(async () => {
    everything = await startEverything();
    gw = await startGateway(`
${httpGateway()}${mcpToolsBackend({ everything: everything.port })}---
apiVersion: switchboard.dev/v1alpha1
kind: ProxyPolicy
metadata: { name: logged }
spec:
  targetRefs: [{ group: gateway.networking.k8s.io, kind: Gateway, name: gw }]
  frontend:
    accessLog:
      attributes:
        add:
          - { name: mcpMethod, expression: mcp.method }
          - { name: mcpTarget, expression: mcp.target }
          - { name: tool, expression: mcp.tool.name }
`, { logger: log.logger });
    assert.deepEqual(gw.applyErrors, []);
  });

  after(async () => {
    await gw?.close();
    await everything?.stop();
  });

  it('a tools/call logs its method, target and tool', async () => {
    const { client } = await connect(gw.url(80, '/mcp'));
    try {
      await client.callTool({ name: 'echo', arguments: { message: 'logged' } });
    } finally {
      await client.close();
    }
    await settle();
    const call = log.requests().find((l) => l.mcpMethod === 'tools/call');
    assert.ok(call, JSON.stringify(log.requests()));
    assert.equal(call.mcpTarget, 'everything');
    assert.equal(call.tool, 'echo');
  });
});
