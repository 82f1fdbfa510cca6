/**
 * MCP gateway cost, in-process (not part of npm test): `node bench/mcp.ts [requests]`.
 * - tools/call through the MCP backend (one target, Stateful session) vs the same JSON-RPC POST
 *   through a plain ProxyBackend route to the same server-everything: gateway CPU per request.
 * - tools/list merged across three targets: CPU per request.
 * CPU is this process's: the gateway and the fetch client both run in it (the client cost is the
 * same in every row, so compare the differences); upstreams are separate processes.
 */
import { startEverything, type Upstream } from '../test/mcp/support.ts';
import { startGateway } from '../test/support/gateway.ts';

const N = Number(process.argv[2] ?? 300);
const ACCEPT = 'application/json, text/event-stream';

async function post(url: string, body: unknown, headers: Record<string, string> = {}): Promise<Response> {
  const res = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', accept: ACCEPT, 'mcp-protocol-version': '2025-06-18', ...headers }, body: JSON.stringify(body) });
  await res.arrayBuffer();
  return res;
}

async function session(url: string): Promise<Record<string, string>> {
  const res = await post(url, { jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'bench', version: '1' } } });
  const id = res.headers.get('mcp-session-id');
  const headers: Record<string, string> = id ? { 'mcp-session-id': id } : {};
  await post(url, { jsonrpc: '2.0', method: 'notifications/initialized' }, headers);
  return headers;
}

async function measure(url: string, method: string, params: Record<string, unknown>): Promise<{ cpuUs: number; ms: number }> {
  const headers = await session(url);
  for (let i = 0; i < 20; i++) await post(url, { jsonrpc: '2.0', id: i + 1, method, params }, headers);
  const cpu = process.cpuUsage();
  const started = performance.now();
  for (let i = 0; i < N; i++) await post(url, { jsonrpc: '2.0', id: i + 100, method, params }, headers);
  const used = process.cpuUsage(cpu);
  return { cpuUs: (used.user + used.system) / N, ms: (performance.now() - started) / N };
}

const upstreams: Upstream[] = await Promise.all([startEverything(), startEverything(), startEverything()]);
const [a, b, c] = upstreams;
const gw = await startGateway(`
apiVersion: gateway.networking.k8s.io/v1
kind: GatewayClass
metadata: { name: switchboard }
spec: { controllerName: switchboard.dev/gateway-controller }
---
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: { name: gw }
spec: { gatewayClassName: switchboard, listeners: [{ name: http, port: 80, protocol: HTTP }] }
---
apiVersion: switchboard.dev/v1alpha1
kind: ProxyBackend
metadata: { name: one }
spec: { mcp: { targets: [{ name: a, static: { host: 127.0.0.1, port: ${a.port} } }] } }
---
apiVersion: switchboard.dev/v1alpha1
kind: ProxyBackend
metadata: { name: three }
spec:
  mcp:
    targets:
      - { name: a, static: { host: 127.0.0.1, port: ${a.port} } }
      - { name: b, static: { host: 127.0.0.1, port: ${b.port} } }
      - { name: c, static: { host: 127.0.0.1, port: ${c.port} } }
---
apiVersion: switchboard.dev/v1alpha1
kind: ProxyBackend
metadata: { name: plain }
spec: { static: { host: 127.0.0.1, port: ${a.port} } }
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: { name: r }
spec:
  parentRefs: [{ name: gw }]
  rules:
    - matches: [{ path: { type: Exact, value: /one } }]
      backendRefs: [{ group: switchboard.dev, kind: ProxyBackend, name: one }]
    - matches: [{ path: { type: Exact, value: /three } }]
      backendRefs: [{ group: switchboard.dev, kind: ProxyBackend, name: three }]
    - matches: [{ path: { type: Exact, value: /mcp } }]
      backendRefs: [{ group: switchboard.dev, kind: ProxyBackend, name: plain }]
`);
try {
  const echo = { name: 'echo', arguments: { message: 'bench' } };
  const plain = await measure(gw.url(80, '/mcp'), 'tools/call', echo);
  const mcp = await measure(gw.url(80, '/one'), 'tools/call', echo);
  const list = await measure(gw.url(80, '/three'), 'tools/list', {});
  const rows = [
    ['tools/call, plain route', plain],
    ['tools/call, MCP backend (1 target)', mcp],
    ['tools/list, MCP backend (3 targets)', list],
  ] as const;
  console.log(`requests per case: ${N} (sequential)`);
  console.log('| case | gateway CPU µs/req | latency ms/req | CPU vs plain |');
  console.log('|---|---|---|---|');
  for (const [name, r] of rows) console.log(`| ${name} | ${r.cpuUs.toFixed(0)} | ${r.ms.toFixed(2)} | ${(r.cpuUs / plain.cpuUs).toFixed(2)}x |`);
} finally {
  await gw.close();
  await Promise.all(upstreams.map((u) => u.stop()));
}
