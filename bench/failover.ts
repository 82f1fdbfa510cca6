/**
 * Fault scenarios for an AI backend's priority group (issue 13; not part of npm test): two
 * providers in one group, `b` always healthy and `a` faulty in one of four ways, under a steady
 * load of streamed chat completions through a gateway process:
 *
 *   429    `a` answers half its requests 429 with `Retry-After: 1`
 *   cut    `a` cuts half its streams after the first token (after the client got bytes: no failover)
 *   stall  `a` stalls half its requests before the response head (the backend's requestTimeout ends them)
 *   flap   `a` fails every request (503) for 3 s, then serves for 3 s, and so on
 *
 * Each scenario runs once with the providers taken in plain rotation and once health-weighted
 * (SWITCHBOARD_LLM_PROVIDER_CHOICE), each in a fresh gateway, and reports the client success rate
 * (200 and a complete stream) and the time to first token (p50, p99), plus what `a` saw: its
 * requests, the ones it failed (stall: how many of those ran into the timeout), and
 * (health-weighted) how often it was evicted.
 *
 *   node bench/failover.ts [--duration 8] [--connections 8] [--scenario 429,cut,stall,flap]
 *                          [--choice rotation,health] [--timeout-ms 1000]
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, openSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { gateway, gatewayClass } from '../test/support/manifests.ts';
import { freePort } from './targets.ts';

const SCENARIOS = ['429', 'cut', 'stall', 'flap'] as const;
type Scenario = (typeof SCENARIOS)[number];
const CHOICES = ['rotation', 'health'] as const;
type Choice = (typeof CHOICES)[number];

const { values } = parseArgs({
  options: {
    duration: { type: 'string', default: '8' },
    connections: { type: 'string', default: '8' },
    scenario: { type: 'string', default: SCENARIOS.join(',') },
    choice: { type: 'string', default: CHOICES.join(',') },
    'timeout-ms': { type: 'string', default: '1000' },
    help: { type: 'boolean', default: false },
  },
});
if (values.help) {
  console.log(readFileSync(new URL(import.meta.url), 'utf8').split('*/')[0]);
  process.exit(0);
}
const durationS = boundedInt(values.duration, 1, 120, 'duration');
const connections = boundedInt(values.connections, 1, 128, 'connections');
const timeoutMs = boundedInt(values['timeout-ms'], 100, 30_000, 'timeout-ms');
const scenarios = listOf(values.scenario, SCENARIOS, 'scenario');
const choices = listOf(values.choice, CHOICES, 'choice');
const REPO_ROOT = resolve(import.meta.dirname, '..');
const FLAP_MS = 3_000;
const TOKEN = 'tok ';
const DELTAS = 20;

// ---- the providers ------------------------------------------------------------------------------

const chunk = (delta: unknown, finish: string | null) => `data: ${JSON.stringify({ id: 'c', object: 'chat.completion.chunk', created: 1, model: 'm', choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;
const HEAD = chunk({ role: 'assistant', content: '' }, null) + chunk({ content: TOKEN }, null);
const TAIL = chunk({ content: TOKEN }, null).repeat(DELTAS - 1) + chunk({}, 'stop') + 'data: [DONE]\n\n';

interface Provider {
  readonly port: number;
  requests: number;
  failed: number;
  /** Stalled requests the gateway gave up on at its timeout (not earlier: a stall eviction fails the others over at once). */
  timedOut: number;
  /** Whether the provider's n-th request (from 0) fails in the scenario's way; unset: it serves every request. */
  fault: ((n: number) => boolean) | undefined;
  close(): Promise<void>;
}

async function startProvider(scenario: Scenario | undefined): Promise<Provider> {
  const open = new Set<http.ServerResponse>();
  const server = http.createServer((req, res) => {
    const n = p.requests++;
    req.resume();
    req.on('end', () => {
      const failing = scenario !== undefined && p.fault !== undefined && p.fault(n);
      if (failing) p.failed++;
      if (failing && scenario === '429') {
        res.writeHead(429, { 'content-type': 'application/json', 'retry-after': '1' }).end('{"error":{"message":"slow down","type":"rate_limit_error"}}');
      } else if (failing && scenario === 'flap') {
        res.writeHead(503, { 'content-type': 'application/json' }).end('{"error":{"message":"down","type":"server_error"}}');
      } else if (failing && scenario === 'stall') {
        open.add(res); // never answered: the gateway's timeout gives up on it (or fails it over when another one's timeout evicts `a`)
        const stalledAt = performance.now();
        res.on('close', () => {
          open.delete(res);
          if (performance.now() - stalledAt >= timeoutMs * 0.9) p.timedOut++;
        });
      } else {
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        res.write(HEAD);
        if (failing && scenario === 'cut') setTimeout(() => res.socket?.destroy(), 5);
        else setImmediate(() => res.end(TAIL));
      }
    });
  });
  server.keepAliveTimeout = 60_000;
  await new Promise<void>((ok) => server.listen(0, '127.0.0.1', ok));
  const p: Provider = {
    port: (server.address() as AddressInfo).port, requests: 0, failed: 0, timedOut: 0, fault: undefined,
    close: () => {
      for (const res of open) res.destroy();
      server.closeAllConnections();
      return new Promise<void>((ok) => server.close(() => ok()));
    },
  };
  return p;
}

function faultOf(scenario: Scenario, started: number): (n: number) => boolean {
  if (scenario === 'flap') return () => Math.floor((Date.now() - started) / FLAP_MS) % 2 === 0;
  return (n) => n % 2 === 0; // half its requests
}

// ---- the gateway --------------------------------------------------------------------------------

interface Gateway { readonly url: string; readonly admin: string; stop(): Promise<void> }

async function startGatewayProcess(a: Provider, b: Provider, choice: Choice): Promise<Gateway> {
  const dir = mkdtempSync(join(tmpdir(), 'switchboard-bench-failover-'));
  const [port, adminPort, metricsPort] = [await freePort(), await freePort(), await freePort()];
  writeFileSync(join(dir, 'gateway.yaml'), gatewayClass() + gateway('bench', [{ name: 'http', port }]) + `
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: { name: bench, namespace: default }
spec:
  parentRefs: [{ name: bench }]
  rules: [{ backendRefs: [{ group: switchboard.dev, kind: ProxyBackend, name: pair }] }]
---
apiVersion: switchboard.dev/v1alpha1
kind: ProxyBackend
metadata: { name: pair, namespace: default }
spec:
  ai:
    groups:
      - providers:
          - { name: a, providerA: {}, host: 127.0.0.1, port: ${a.port} }
          - { name: b, providerA: {}, host: 127.0.0.1, port: ${b.port} }
  policies:
    auth: { key: bench-key }
    http: { requestTimeout: ${timeoutMs}ms }
    health: { eviction: { consecutiveFailures: 1, duration: 2s } }
    ai: { routes: { /v1/chat/completions: Completions } }
`);
  const logPath = join(dir, 'switchboard.log');
  const child = spawn(process.execPath, [
    'src/cli/main.ts', 'run', '-f', dir, '--workers', '1', '--log-level', 'error',
    '--admin-address', `127.0.0.1:${adminPort}`, '--metrics-address', `127.0.0.1:${metricsPort}`,
  ], { cwd: REPO_ROOT, stdio: ['ignore', openSync(logPath, 'w'), openSync(logPath, 'a')], env: { ...process.env, SWITCHBOARD_LLM_PROVIDER_CHOICE: choice } });
  const admin = `http://127.0.0.1:${adminPort}`;
  await waitForReady(`${admin}/healthz/ready`, child, logPath);
  return {
    url: `http://127.0.0.1:${port}/v1/chat/completions`,
    admin,
    async stop() {
      if (child.exitCode === null && child.signalCode === null) {
        const exited = new Promise<void>((ok) => child.once('exit', () => ok()));
        child.kill('SIGTERM');
        const timer = setTimeout(() => child.kill('SIGKILL'), 5_000);
        await exited;
        clearTimeout(timer);
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

async function waitForReady(url: string, child: ChildProcess, logPath: string): Promise<void> {
  const deadline = Date.now() + 20_000;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`gateway exited (${child.exitCode}):\n${readFileSync(logPath, 'utf8').slice(-2000)}`);
    if ((await fetch(url).then((r) => r.status, () => 0)) === 200) return;
    await new Promise((ok) => setTimeout(ok, 100));
  }
  child.kill('SIGKILL');
  throw new Error(`gateway not ready within 20 s:\n${readFileSync(logPath, 'utf8').slice(-2000)}`);
}

// ---- the load -----------------------------------------------------------------------------------

const BODY = JSON.stringify({ model: 'm', stream: true, messages: [{ role: 'user', content: 'hi' }] });

/** One streamed request: whether it succeeded (200, every token, [DONE]) and ms to its first token. */
function streamOnce(url: string, agent: http.Agent): Promise<{ ok: boolean; ttftMs: number | undefined }> {
  return new Promise((done) => {
    const start = process.hrtime.bigint();
    let first: number | undefined;
    let text = '';
    const req = http.request(url, { method: 'POST', agent, headers: { 'content-type': 'application/json' } }, (res) => {
      res.setEncoding('utf8');
      res.on('data', (c: string) => {
        if (first === undefined && c.includes(TOKEN)) first = Number(process.hrtime.bigint() - start) / 1e6;
        text += c;
      });
      res.on('end', () => done({ ok: res.statusCode === 200 && text.split(TOKEN).length - 1 === DELTAS && text.includes('[DONE]') && !text.includes('"error"'), ttftMs: first }));
      res.on('error', () => done({ ok: false, ttftMs: first }));
    });
    req.on('error', () => done({ ok: false, ttftMs: first }));
    req.end(BODY);
  });
}

interface Result { scenario: Scenario; choice: Choice; requests: number; ok: number; p50: number; p99: number; aRequests: number; aFailed: number; aTimedOut: number; evictions: number | undefined }

async function runScenario(scenario: Scenario, choice: Choice): Promise<Result> {
  const a = await startProvider(scenario);
  const b = await startProvider(undefined);
  const gw = await startGatewayProcess(a, b, choice);
  const agent = new http.Agent({ keepAlive: true, maxSockets: connections });
  try {
    // Warm-up (pools, JIT) against healthy providers only: the scenario starts after it.
    for (let i = 0; i < 20; i++) await streamOnce(gw.url, agent);
    a.requests = 0;
    b.requests = 0;
    a.fault = faultOf(scenario, Date.now());
    const ttft: number[] = [];
    let requests = 0;
    let ok = 0;
    const until = Date.now() + durationS * 1000;
    await Promise.all(Array.from({ length: connections }, async () => {
      while (Date.now() < until) {
        const r = await streamOnce(gw.url, agent);
        requests++;
        if (r.ok) ok++;
        if (r.ttftMs !== undefined) ttft.push(r.ttftMs);
      }
    }));
    const evictions = await fetch(`${gw.admin}/providers`).then(async (r) => {
      const body = await r.json() as { backends: { providers: { provider: string; timesEvicted: number }[] }[] };
      return body.backends[0]?.providers.find((p) => p.provider === 'a')?.timesEvicted;
    }, () => undefined);
    ttft.sort((x, y) => x - y);
    return { scenario, choice, requests, ok, p50: pct(ttft, 0.5), p99: pct(ttft, 0.99), aRequests: a.requests, aFailed: a.failed, aTimedOut: a.timedOut, evictions };
  } finally {
    agent.destroy();
    await gw.stop();
    await Promise.all([a.close(), b.close()]);
  }
}

function pct(sorted: readonly number[], q: number): number {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];
}

// ---- main ---------------------------------------------------------------------------------------

const loadBefore = loadavg()[0];
const results: Result[] = [];
for (const scenario of scenarios) {
  for (const choice of choices) {
    process.stderr.write(`${scenario} × ${choice} …\n`);
    const r = await runScenario(scenario, choice);
    results.push(r);
    process.stderr.write(`  ${row(r)}\n`);
  }
}
console.log([
  `Command: \`node bench/failover.ts --duration ${durationS} --connections ${connections} --timeout-ms ${timeoutMs} --scenario ${scenarios.join(',')} --choice ${choices.join(',')}\``,
  `Date: ${new Date().toISOString()}; Node ${process.version}; CPU: ${cpus()[0]?.model ?? 'unknown'} × ${cpus().length}; load average (1 min) ${loadBefore.toFixed(1)} before, ${loadavg()[0].toFixed(1)} after`,
  `Group of two providers, \`b\` healthy; backend policy http.requestTimeout ${timeoutMs}ms, health.eviction { consecutiveFailures: 1, duration: 2s }; ${connections} clients streaming ${DELTAS}-token chats for ${durationS}s per row`,
  '',
  '| scenario | choice | requests | success | TTFT p50 (ms) | TTFT p99 (ms) | `a`: requests / failed | `a` evicted |',
  '|---|---|---:|---:|---:|---:|---:|---:|',
  ...results.map(row),
].join('\n'));

function row(r: Result): string {
  return `| ${r.scenario} | ${r.choice} | ${r.requests} | ${((100 * r.ok) / Math.max(r.requests, 1)).toFixed(2)} % | ${r.p50.toFixed(2)} | ${r.p99.toFixed(2)} | ${r.aRequests} / ${r.aFailed}${r.scenario === 'stall' ? ` (${r.aTimedOut} timed out)` : ''} | ${r.evictions ?? '—'} |`;
}

function boundedInt(text: string, min: number, max: number, name: string): number {
  const n = Number(text);
  if (!Number.isInteger(n) || n < min || n > max) throw new Error(`--${name} must be an integer in ${min}..${max}, got ${text}`);
  return n;
}

function listOf<T extends string>(text: string, allowed: readonly T[], name: string): T[] {
  const items = text.split(',').map((s) => s.trim()).filter(Boolean);
  for (const item of items) if (!allowed.includes(item as T)) throw new Error(`--${name}: ${item} is not one of ${allowed.join(', ')}`);
  return items as T[];
}
