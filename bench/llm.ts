/**
 * What LLM translation costs the gateway, measured in ONE run against a cheap mock provider on
 * loopback (fixed bodies and fixed SSE streams, served from this process):
 *
 *   (a) plain      POST /plain/v1/chat/completions → HTTPRoute → Service → mock (bytes proxied)
 *   (b) translated POST /ai/v1/chat/completions → `ai` backend (providerD) → mock /v1/messages:
 *                  chat completions → Anthropic messages and back, non-streaming
 *   (c) streaming  the same with `stream: true`: the mock sends an Anthropic SSE stream of
 *                  SHORT or LONG text deltas; CPU per event = the slope between the two lengths
 *                  (so per-request work cancels out)
 *   (d) TTFT       time to the first text delta at one connection, through the gateway (c) and
 *                  straight to the mock (same stream, Anthropic format): the difference is the
 *                  added time to first token
 *
 * CPU is the gateway process tree's utime+stime from /proc (proc-cpu.ts) around each wrk run,
 * divided by the requests wrk completed. Phases are interleaved round by round and the medians
 * printed as markdown. Not part of npm test:
 *
 *   node bench/llm.ts [--duration 5] [--rounds 3] [--connections 16] [--ttft-requests 200]
 *                     [--settle SECONDS] [--gateway-node-flags=FLAGS] [--threads]
 *
 * To see where one phase spends its CPU: `--cpu-prof DIR --profile-phase translated` loads only
 * that phase (after the warm-up) under `node --cpu-prof` and leaves the profile in DIR; without
 * `--profile-phase` the whole run is profiled and bench/profile-windows.ts cuts it into phases.
 * `--settle S` idles S seconds before each load and prints the gateway's CPU meanwhile (work one
 * phase leaves for the next); `--gateway-node-flags=...` passes V8/Node flags to the gateway;
 * `--threads` prints each load's CPU per request by gateway thread (main thread vs V8's GC and
 * compiler workers, which a CPU profile does not sample).
 */
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, openSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { parseArgs } from 'node:util';
import { gateway, gatewayClass, service } from '../test/support/manifests.ts';
import { threadCpuMicros, treeCpuMicros } from './proc-cpu.ts';
import { median } from './report.ts';
import { freePort } from './targets.ts';
import { parseWrk } from './wrk.ts';

const { values } = parseArgs({
  options: {
    duration: { type: 'string', default: '5' },
    rounds: { type: 'string', default: '3' },
    connections: { type: 'string', default: '16' },
    'ttft-requests': { type: 'string', default: '200' },
    'cpu-prof': { type: 'string' },
    'profile-phase': { type: 'string' },
    settle: { type: 'string', default: '0' },
    'gateway-node-flags': { type: 'string', default: '' },
    threads: { type: 'boolean', default: false },
  },
});
const durationS = boundedInt(values.duration, 1, 60, 'duration');
const rounds = boundedInt(values.rounds, 1, 20, 'rounds');
const connections = boundedInt(values.connections, 1, 256, 'connections');
const ttftRequests = boundedInt(values['ttft-requests'], 10, 5000, 'ttft-requests');
/** Idle seconds before each load; the gateway's CPU during them is reported (work one phase leaves for the next). */
const settleS = boundedInt(values.settle, 0, 30, 'settle');

/** Stream lengths in text deltas; every stream also carries 5 framing events (start, block start/stop, delta, stop). */
const SHORT = 10;
const LONG = 410;
const FRAMING_EVENTS = 5;
const TOKEN = 'tok ';
const REPO_ROOT = resolve(import.meta.dirname, '..');
const run = promisify(execFile);

// ---- the mock provider: fixed answers, computed once -------------------------------------------

const CHAT_COMPLETION = JSON.stringify({
  id: 'chatcmpl-bench', object: 'chat.completion', created: 1700000000, model: 'bench-model',
  choices: [{ index: 0, message: { role: 'assistant', content: 'The quick brown fox jumps over the lazy dog.' }, finish_reason: 'stop' }],
  usage: { prompt_tokens: 12, completion_tokens: 10, total_tokens: 22 },
});
const ANTHROPIC_MESSAGE = JSON.stringify({
  id: 'msg_bench', type: 'message', role: 'assistant', model: 'bench-model',
  content: [{ type: 'text', text: 'The quick brown fox jumps over the lazy dog.' }],
  stop_reason: 'end_turn', stop_sequence: null, usage: { input_tokens: 12, output_tokens: 10 },
});

const sse = (event: string, data: unknown) => `event: ${event}\ndata: ${JSON.stringify(data)}\n\n`;

/** An Anthropic stream split in two writes: up to the first text delta, then the rest (a provider's first token comes early). */
function anthropicStream(deltas: number): [Buffer, Buffer] {
  const delta = sse('content_block_delta', { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: TOKEN } });
  const head = sse('message_start', { type: 'message_start', message: { id: 'msg_bench', type: 'message', role: 'assistant', model: 'bench-model', content: [], stop_reason: null, stop_sequence: null, usage: { input_tokens: 12, output_tokens: 1 } } })
    + sse('content_block_start', { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } }) + delta;
  const tail = delta.repeat(deltas - 1) + sse('content_block_stop', { type: 'content_block_stop', index: 0 })
    + sse('message_delta', { type: 'message_delta', delta: { stop_reason: 'end_turn', stop_sequence: null }, usage: { output_tokens: deltas } })
    + sse('message_stop', { type: 'message_stop' });
  return [Buffer.from(head), Buffer.from(tail)];
}

/** An OpenAI chat stream of the same length, for the plain route's streaming reference. */
function openaiStream(deltas: number): [Buffer, Buffer] {
  const chunk = (delta: unknown, finish: string | null) => `data: ${JSON.stringify({ id: 'chatcmpl-bench', object: 'chat.completion.chunk', created: 1700000000, model: 'bench-model', choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;
  const head = chunk({ role: 'assistant', content: '' }, null) + chunk({ content: TOKEN }, null);
  const tail = chunk({ content: TOKEN }, null).repeat(deltas - 1) + chunk({}, 'stop')
    + `data: ${JSON.stringify({ id: 'chatcmpl-bench', object: 'chat.completion.chunk', created: 1700000000, model: 'bench-model', choices: [], usage: { prompt_tokens: 12, completion_tokens: deltas, total_tokens: 12 + deltas } })}\n\ndata: [DONE]\n\n`;
  return [Buffer.from(head), Buffer.from(tail)];
}

const STREAMS: Readonly<Record<'anthropic' | 'openai', ReadonlyMap<number, [Buffer, Buffer]>>> = {
  anthropic: new Map([SHORT, LONG].map((n) => [n, anthropicStream(n)])),
  openai: new Map([SHORT, LONG].map((n) => [n, openaiStream(n)])),
};

/** The request's model names the stream length (`stream-410`); bodies are small, so a regex is enough. */
function streamLength(body: string): number | undefined {
  if (!/"stream"\s*:\s*true/.test(body)) return undefined;
  return Number(/"model"\s*:\s*"stream-(\d+)"/.exec(body)?.[1] ?? SHORT) === LONG ? LONG : SHORT;
}

async function startMockProvider(): Promise<{ port: number; close(): Promise<void> }> {
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      const anthropic = (req.url ?? '').endsWith('/v1/messages');
      const length = streamLength(body);
      if (length === undefined) {
        const answer = anthropic ? ANTHROPIC_MESSAGE : CHAT_COMPLETION;
        res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(answer) }).end(answer);
        return;
      }
      const [head, tail] = STREAMS[anthropic ? 'anthropic' : 'openai'].get(length) as [Buffer, Buffer];
      res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
      res.write(head);
      setImmediate(() => res.end(tail));
    });
  });
  server.keepAliveTimeout = 60_000;
  await new Promise<void>((ok) => server.listen(0, '127.0.0.1', ok));
  return {
    port: (server.address() as AddressInfo).port,
    close: () => {
      server.closeAllConnections();
      return new Promise<void>((ok) => server.close(() => ok()));
    },
  };
}

// ---- the gateway: one process, both routes -----------------------------------------------------

interface Gateway { readonly pid: number; readonly url: string; stop(): Promise<void> }

async function startGatewayProcess(providerPort: number): Promise<Gateway> {
  const dir = mkdtempSync(join(tmpdir(), 'switchboard-bench-llm-'));
  const [port, adminPort, metricsPort] = [await freePort(), await freePort(), await freePort()];
  writeFileSync(join(dir, 'gateway.yaml'), gatewayClass() + gateway('bench', [{ name: 'http', port }]) +
    service('provider', { host: '127.0.0.1', port: providerPort }) + `
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: { name: bench, namespace: default }
spec:
  parentRefs: [{ name: bench }]
  rules:
    - matches: [{ path: { type: PathPrefix, value: /plain } }]
      backendRefs: [{ name: provider, port: 8080 }]
    - matches: [{ path: { type: PathPrefix, value: /ai } }]
      backendRefs: [{ group: switchboard.dev, kind: ProxyBackend, name: anthropic }]
---
apiVersion: switchboard.dev/v1alpha1
kind: ProxyBackend
metadata: { name: anthropic, namespace: default }
spec:
  ai:
    provider: { providerD: {}, host: 127.0.0.1, port: ${providerPort} }
  policies:
    auth: { key: bench-key }
    ai: { routes: { /v1/chat/completions: Completions } }
`);
  const logPath = join(dir, 'switchboard.log');
  const profiling = values['cpu-prof'] === undefined ? [] : ['--cpu-prof', '--cpu-prof-dir', resolve(values['cpu-prof'])];
  const child = spawn(process.execPath, [
    ...profiling,
    ...values['gateway-node-flags'].split(' ').filter(Boolean),
    'src/cli/main.ts', 'run', '-f', dir, '--workers', '1', '--log-level', 'warn',
    '--admin-address', `127.0.0.1:${adminPort}`, '--metrics-address', `127.0.0.1:${metricsPort}`,
  ], { cwd: REPO_ROOT, stdio: ['ignore', openSync(logPath, 'w'), openSync(logPath, 'a')] });
  await waitForReady(`http://127.0.0.1:${adminPort}/healthz/ready`, child, logPath);
  return {
    pid: child.pid as number,
    url: `http://127.0.0.1:${port}`,
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
    if ((await post(url, '', 'GET').catch(() => ({ status: 0 }))).status === 200) return;
    await new Promise((ok) => setTimeout(ok, 100));
  }
  child.kill('SIGKILL');
  throw new Error(`gateway not ready within 20 s:\n${readFileSync(logPath, 'utf8').slice(-2000)}`);
}

// ---- load, CPU, TTFT ------------------------------------------------------------------------------

const chatBody = (model: string, stream: boolean) => JSON.stringify({
  model, max_tokens: 256, stream, messages: [{ role: 'system', content: 'You are terse.' }, { role: 'user', content: 'Say something about foxes and dogs.' }],
});

interface Phase { readonly name: string; readonly path: string; readonly body: string }
const PHASES: readonly Phase[] = [
  { name: 'plain', path: '/plain/v1/chat/completions', body: chatBody('bench-model', false) },
  { name: 'translated', path: '/ai/v1/chat/completions', body: chatBody('bench-model', false) },
  { name: `translated stream ${SHORT}`, path: '/ai/v1/chat/completions', body: chatBody(`stream-${SHORT}`, true) },
  { name: `translated stream ${LONG}`, path: '/ai/v1/chat/completions', body: chatBody(`stream-${LONG}`, true) },
  { name: `plain stream ${SHORT}`, path: '/plain/v1/chat/completions', body: chatBody(`stream-${SHORT}`, true) },
  { name: `plain stream ${LONG}`, path: '/plain/v1/chat/completions', body: chatBody(`stream-${LONG}`, true) },
];

/** wrk with a POST script; returns gateway CPU-µs per completed request and req/s. */
async function load(gw: Gateway, phase: Phase, scriptDir: string, seconds = durationS): Promise<{ cpuMicros: number; rps: number; errors: number }> {
  const script = join(scriptDir, `${phase.name.replace(/\W+/g, '-')}.lua`);
  writeFileSync(script, `wrk.method = "POST"\nwrk.body = ${JSON.stringify(phase.body)}\nwrk.headers["content-type"] = "application/json"\n`);
  const startUs = monotonicMicros();
  const threadsBefore = values.threads ? threadCpuMicros(gw.pid) : undefined;
  const before = treeCpuMicros(gw.pid);
  const { stdout } = await run('wrk', ['-t1', `-c${connections}`, `-d${seconds}s`, '--latency', '-s', script, `${gw.url}${phase.path}`], { timeout: (seconds + 30) * 1000 });
  const cpu = treeCpuMicros(gw.pid) - before;
  const r = parseWrk(stdout);
  windows.push({ phase: phase.name, startUs, endUs: monotonicMicros(), requests: r.requests });
  if (threadsBefore) {
    const after = threadCpuMicros(gw.pid);
    const perThread = [...after].map(([name, us]) => `${name} ${((us - (threadsBefore.get(name) ?? 0)) / Math.max(r.requests, 1)).toFixed(1)}`);
    process.stderr.write(`  ${phase.name}: ${(cpu / Math.max(r.requests, 1)).toFixed(1)} CPU-µs/req; by thread: ${perThread.join(', ')}\n`);
  }
  return { cpuMicros: cpu / Math.max(r.requests, 1), rps: r.requestsPerSecond, errors: r.errors };
}

/**
 * When and how long each load ran, on the clock V8's CPU profiler stamps its samples with (both
 * are CLOCK_MONOTONIC on Linux): with `--cpu-prof` and no `--profile-phase`, written next to the
 * profile so it can be cut into phases and rounds (bench/profile-windows.ts).
 */
const windows: { phase: string; startUs: number; endUs: number; requests: number }[] = [];
function monotonicMicros(): number {
  return Number(process.hrtime.bigint() / 1000n);
}

const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });

function post(url: string, body: string, method = 'POST'): Promise<{ status: number; text: string }> {
  return new Promise((ok, fail) => {
    const req = http.request(url, { method, agent, headers: { 'content-type': 'application/json' } }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => ok({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8') }));
    });
    req.on('error', fail);
    req.end(body);
  });
}

/** Milliseconds from sending the request to the first body bytes holding a text delta; the rest is drained. */
function timeToFirstToken(url: string, body: string): Promise<number> {
  return new Promise((ok, fail) => {
    const start = process.hrtime.bigint();
    let first: number | undefined;
    const req = http.request(url, { method: 'POST', agent, headers: { 'content-type': 'application/json' } }, (res) => {
      res.on('data', (c: Buffer) => {
        if (first === undefined && c.includes(TOKEN)) first = Number(process.hrtime.bigint() - start) / 1e6;
      });
      res.on('end', () => (first === undefined ? fail(new Error(`no token from ${url} (status ${res.statusCode})`)) : ok(first)));
    });
    req.on('error', fail);
    req.end(body);
  });
}

async function ttftP50(url: string, body: string): Promise<number> {
  const samples: number[] = [];
  for (let i = 0; i < ttftRequests; i++) samples.push(await timeToFirstToken(url, body));
  return median(samples.slice(Math.min(10, samples.length - 1))); // the first few warm pools and JIT
}

/** Every phase answers 200 with what it should before anything is measured. */
async function checkAnswers(gw: Gateway, providerUrl: string): Promise<void> {
  const translated = await post(`${gw.url}/ai/v1/chat/completions`, chatBody('bench-model', false));
  if (translated.status !== 200 || !translated.text.includes('"chat.completion"')) throw new Error(`translated route answered ${translated.status}: ${translated.text}`);
  const stream = await post(`${gw.url}/ai/v1/chat/completions`, chatBody(`stream-${LONG}`, true));
  const tokens = stream.text.split(TOKEN).length - 1;
  if (stream.status !== 200 || tokens !== LONG || !stream.text.includes('[DONE]')) throw new Error(`translated stream: status ${stream.status}, ${tokens} tokens`);
  const plain = await post(`${gw.url}/plain/v1/chat/completions`, chatBody('bench-model', false));
  if (plain.status !== 200 || plain.text !== CHAT_COMPLETION) throw new Error(`plain route answered ${plain.status}`);
  const direct = await post(`${providerUrl}/v1/messages`, chatBody(`stream-${LONG}`, true));
  if (!direct.text.includes('message_stop')) throw new Error('the mock provider does not stream');
}

// ---- main ---------------------------------------------------------------------------------------

const scriptDir = mkdtempSync(join(tmpdir(), 'switchboard-bench-llm-wrk-'));
const provider = await startMockProvider();
const providerUrl = `http://127.0.0.1:${provider.port}`;
let gw: Gateway | undefined;
const cleanup = async () => {
  agent.destroy();
  await gw?.stop();
  await provider.close();
  rmSync(scriptDir, { recursive: true, force: true });
};
process.once('SIGINT', () => void cleanup().then(() => process.exit(130)));

try {
  gw = await startGatewayProcess(provider.port);
  await checkAnswers(gw, providerUrl);
  // One untimed pass so JIT, pools and caches are warm before anything counts.
  const profiled = PHASES.find((p) => p.name === values['profile-phase']);
  if (values['profile-phase'] !== undefined && profiled === undefined) throw new Error(`--profile-phase must be one of: ${PHASES.map((p) => p.name).join(', ')}`);
  // A profiled phase warms up alone, so the profile holds no other phase's work.
  for (const phase of profiled ? [profiled] : PHASES) await load(gw, phase, scriptDir, 1);
  if (profiled) {
    const r = await load(gw, profiled, scriptDir);
    console.log(`${profiled.name}: ${r.cpuMicros.toFixed(1)} CPU-µs/req, ${r.rps.toFixed(0)} req/s, ${r.errors} errors`);
  } else await measureAll(gw);
} finally {
  await cleanup();
  if (values['cpu-prof'] !== undefined) writeFileSync(join(resolve(values['cpu-prof']), 'windows.json'), JSON.stringify(windows, null, 1));
}

async function measureAll(gw: Gateway): Promise<void> {
  const loadBefore = loadavg()[0];
  const cpu = new Map<string, number[]>(PHASES.map((p) => [p.name, []]));
  const rps = new Map<string, number[]>(PHASES.map((p) => [p.name, []]));
  const ttft = { direct: [] as number[], gateway: [] as number[], plain: [] as number[] };
  let errors = 0;
  for (let round = 0; round < rounds; round++) {
    for (const [i] of PHASES.entries()) {
      const phase = PHASES[(i + round) % PHASES.length];
      process.stderr.write(`round ${round + 1}/${rounds}: ${phase.name}\n`);
      if (settleS > 0) {
        const before = treeCpuMicros(gw.pid);
        await new Promise((ok) => setTimeout(ok, settleS * 1000));
        process.stderr.write(`  idle CPU before ${phase.name}: ${((treeCpuMicros(gw.pid) - before) / 1000).toFixed(1)} ms in ${settleS}s\n`);
      }
      const r = await load(gw, phase, scriptDir);
      cpu.get(phase.name)?.push(r.cpuMicros);
      rps.get(phase.name)?.push(r.rps);
      errors += r.errors;
    }
    process.stderr.write(`round ${round + 1}/${rounds}: time to first token\n`);
    const streamBody = chatBody(`stream-${LONG}`, true);
    ttft.direct.push(await ttftP50(`${providerUrl}/v1/messages`, streamBody));
    ttft.gateway.push(await ttftP50(`${gw.url}/ai/v1/chat/completions`, streamBody));
    ttft.plain.push(await ttftP50(`${gw.url}/plain/v1/chat/completions`, streamBody));
  }
  report({ cpu, rps, ttft, errors, loadBefore, loadAfter: loadavg()[0] });
}

function report(r: { cpu: Map<string, number[]>; rps: Map<string, number[]>; ttft: { direct: number[]; gateway: number[]; plain: number[] }; errors: number; loadBefore: number; loadAfter: number }): void {
  const m = (name: string) => median(r.cpu.get(name) ?? []);
  const perEvent = (prefix: string) => (m(`${prefix} ${LONG}`) - m(`${prefix} ${SHORT}`)) / (LONG - SHORT);
  const ratio = m('translated') / m('plain');
  // Same-round pairs drift less with machine load than the ratio of the medians.
  const plainRounds = r.cpu.get('plain') ?? [];
  const translatedRounds = r.cpu.get('translated') ?? [];
  const pairedRatio = median(translatedRounds.map((t, i) => t / plainRounds[i]));
  const translatedPerEvent = perEvent('translated stream');
  const added = median(r.ttft.gateway.map((g, i) => g - r.ttft.direct[i]));
  const verdict = (ok: boolean) => (ok ? 'met' : '**missed**');
  console.log([
    `Command: \`node bench/llm.ts --duration ${durationS} --rounds ${rounds} --connections ${connections} --ttft-requests ${ttftRequests}\``,
    `Date: ${new Date().toISOString()}; Node ${process.version}; CPU: ${cpus()[0]?.model ?? 'unknown'} × ${cpus().length}; load average (1 min) ${r.loadBefore.toFixed(1)} before, ${r.loadAfter.toFixed(1)} after`,
    `Gateway: --workers 1 --log-level warn; mock provider in the bench process; wrk -t1 -c${connections}; medians of ${rounds} interleaved rounds of ${durationS}s`,
    '',
    '| phase | req/s | gateway CPU-µs/req |',
    '|---|---:|---:|',
    ...PHASES.map((p) => `| ${p.name} | ${median(r.rps.get(p.name) ?? []).toFixed(0)} | ${m(p.name).toFixed(1)} |`),
    '',
    '| measure | value | target | |',
    '|---|---:|---:|---|',
    `| translated ÷ plain CPU per request (non-streaming), ratio of medians | ${ratio.toFixed(2)}× | ≤ 1.3× | ${verdict(ratio <= 1.3)} |`,
    `| the same, median of per-round ratios (rounds: ${translatedRounds.map((t, i) => (t / plainRounds[i]).toFixed(2)).join(', ')}) | ${pairedRatio.toFixed(2)}× | ≤ 1.3× | ${verdict(pairedRatio <= 1.3)} |`,
    `| CPU-µs per streamed SSE event, translated (slope ${SHORT}→${LONG} deltas) | ${translatedPerEvent.toFixed(2)} | ≤ 8 | ${verdict(translatedPerEvent <= 8)} |`,
    `| CPU-µs per streamed SSE event, plain route (reference) | ${perEvent('plain stream').toFixed(2)} | — | |`,
    `| CPU-µs per event, all-in (translated stream ${LONG} ÷ ${LONG + FRAMING_EVENTS} events) | ${(m(`translated stream ${LONG}`) / (LONG + FRAMING_EVENTS)).toFixed(2)} | — | |`,
    `| time to first token p50: direct / through the gateway (ms) | ${median(r.ttft.direct).toFixed(3)} / ${median(r.ttft.gateway).toFixed(3)} | — | |`,
    `| added time to first token, p50 (ms) | ${added.toFixed(3)} | ≤ 1 | ${verdict(added <= 1)} |`,
    `| time to first token p50 through the plain route (ms, reference) | ${median(r.ttft.plain).toFixed(3)} | — | |`,
    ...(r.errors > 0 ? ['', `**${r.errors} wrk errors (non-2xx or socket errors): the run is not valid.**`] : []),
  ].join('\n'));
}

function boundedInt(text: string, min: number, max: number, name: string): number {
  const n = Number(text);
  if (!Number.isInteger(n) || n < min || n > max) throw new Error(`--${name} must be an integer in ${min}..${max}, got ${text}`);
  return n;
}
