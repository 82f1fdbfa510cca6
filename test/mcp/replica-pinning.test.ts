import assert from 'node:assert/strict';
import { createServer, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { decodeSession } from '../../src/proxy/mcp/session-codec.ts';
import { startGateway, type GatewayHarness } from '../support/gateway.ts';
import { connect, connectSse, startEverything, type Upstream } from './support.ts';
import { httpGateway } from '../support/manifests.ts';

/**
 * A Stateful session stays on the Service replica that holds its upstream session. Two real
 * server-everything processes stand in for two replicas of one Service (an EndpointSlice each,
 * both on 127.0.0.1); each sits behind a recording relay, so the test sees which replica every
 * request reached and which upstream session ids each replica issued. The whole pipeline runs:
 * YAML → translate (EndpointSlices → target endpoints) → runtime → MCP handler.
 */

const KEY_HEX = '5a'.repeat(32);
// The runtime's MCP handlers read SESSION_KEY when the config is applied; every gateway here shares it.
process.env.SESSION_KEY = KEY_HEX;
const KEY = Buffer.from(KEY_HEX, 'hex');
const BACKEND_KEY = 'backend/default/tools';
const SERVICE_HOST = 'everything.default.svc.cluster.local:80';

interface Replica {
  readonly name: string;
  readonly port: number;
  /** Upstream session ids this replica issued (the `mcp-session-id` of its initialize answers). */
  readonly issued: Set<string>;
  /** Every request that named an upstream session. */
  readonly seen: { method: string; sid: string }[];
  readonly hosts: Set<string>;
  /** initialize POSTs (no session yet) this replica answered. */
  initializes: number;
  close(): Promise<void>;
}

/** A relay in front of one replica that records what reaches it. */
async function replica(name: string, upstream: Upstream): Promise<Replica> {
  const state: Replica = {
    name, port: 0, issued: new Set(), seen: [], hosts: new Set(), initializes: 0,
    close: () => new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    }),
  };
  const server: Server = createServer((req, res) => {
    const sid = req.headers['mcp-session-id'];
    if (typeof sid === 'string') state.seen.push({ method: req.method ?? '', sid });
    else if (req.method === 'POST') state.initializes++;
    state.hosts.add(req.headers.host ?? '');
    const out = request({ host: '127.0.0.1', port: upstream.port, method: req.method, path: req.url, headers: req.headers }, (answer) => {
      const issued = answer.headers['mcp-session-id'];
      if (typeof issued === 'string') state.issued.add(issued);
      res.writeHead(answer.statusCode ?? 502, answer.headers);
      answer.pipe(res);
    });
    out.on('error', () => res.destroy());
    res.on('close', () => out.destroy());
    req.pipe(out);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return Object.assign(state, { port: (server.address() as AddressInfo).port });
}

function slice(name: string, port: number): string {
  return `---
apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata: { name: ${name}, labels: { kubernetes.io/service-name: everything } }
addressType: IPv4
ports: [{ name: mcp, port: ${port}, protocol: TCP }]
endpoints: [{ addresses: [127.0.0.1], conditions: { ready: true } }]
`;
}

function manifests(replicas: readonly Replica[]): string {
  return `
${httpGateway()}---
apiVersion: v1
kind: Service
metadata: { name: everything }
spec:
  ports: [{ name: mcp, port: 80 }]
${replicas.map((r) => slice(`everything-${r.name}`, r.port)).join('')}---
apiVersion: switchboard.dev/v1alpha1
kind: ProxyBackend
metadata: { name: tools }
spec:
  mcp:
    targets: [{ name: everything, static: { backendRef: { name: everything }, port: 80 } }]
---
apiVersion: switchboard.dev/v1alpha1
kind: ProxyBackend
metadata: { name: stateless }
spec:
  mcp:
    sessionRouting: Stateless
    targets: [{ name: everything, static: { backendRef: { name: everything }, port: 80 } }]
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: { name: mcp }
spec:
  parentRefs: [{ name: gw }]
  rules:
    - matches: [{ path: { type: PathPrefix, value: /mcp } }]
      backendRefs: [{ group: switchboard.dev, kind: ProxyBackend, name: tools }]
    - matches: [{ path: { type: PathPrefix, value: /stateless } }]
      backendRefs: [{ group: switchboard.dev, kind: ProxyBackend, name: stateless }]
`;
}

/** The replica port a gateway session id is pinned to, read from the sealed state. */
function pinnedPort(sessionId: string | undefined): number {
  const state = decodeSession(sessionId ?? '', KEY, BACKEND_KEY);
  const ep = state?.targets.everything?.ep;
  assert.ok(ep, `the session pins an endpoint: ${JSON.stringify(state)}`);
  return Number(ep.split(':').at(-1));
}

function upstreamSid(sessionId: string | undefined): string {
  const sid = decodeSession(sessionId ?? '', KEY, BACKEND_KEY)?.targets.everything?.sid;
  assert.ok(sid);
  return sid;
}

/** Every recorded request that named an upstream session reached the replica that issued it. */
function assertNoHops(replicas: readonly Replica[]): void {
  for (const r of replicas) {
    const strays = r.seen.filter((s) => !r.issued.has(s.sid));
    assert.deepEqual(strays, [], `replica ${r.name} got requests of sessions another replica holds`);
  }
}

const INIT = { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } } };

async function post(url: string, body: unknown, headers: Record<string, string> = {}): Promise<Response> {
  return fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers }, body: JSON.stringify(body) });
}

describe('MCP sessions pinned to one Service replica', () => {
  let upstreams: Upstream[] = [];
  let a: Replica;
  let b: Replica;
  let gw: GatewayHarness;
  let second: GatewayHarness;

  before(async () => {
    upstreams = await Promise.all([startEverything(), startEverything()]);
    [a, b] = await Promise.all([replica('a', upstreams[0]), replica('b', upstreams[1])]);
    [gw, second] = await Promise.all([startGateway(manifests([a, b])), startGateway(manifests([a, b]))]);
    assert.deepEqual(gw.applyErrors, []);
  });

  after(async () => {
    await Promise.all([gw?.close(), second?.close()]);
    await Promise.all([a?.close(), b?.close()]);
    await Promise.all(upstreams.map((u) => u.stop()));
  });

  it('translates the two EndpointSlices into the target endpoints', () => {
    const target = gw.config.backends['backend/default/tools']?.mcp?.targets[0];
    assert.deepEqual(target?.endpoints, [{ host: '127.0.0.1', port: a.port }, { host: '127.0.0.1', port: b.port }].sort((x, y) => x.port - y.port));
    assert.equal(target?.host, 'everything.default.svc.cluster.local');
  });

  it('spreads sessions over both replicas; every request of a session reaches the replica holding it', async () => {
    const sessions = await Promise.all([1, 2, 3, 4].map(() => connect(gw.url(80, '/mcp'))));
    try {
      const ports = sessions.map((s) => pinnedPort(s.transport.sessionId));
      assert.deepEqual(new Set(ports), new Set([a.port, b.port]), 'both replicas hold sessions');
      for (const [i, { client }] of sessions.entries()) {
        for (let call = 0; call < 3; call++) {
          const result = await client.callTool({ name: 'echo', arguments: { message: `s${i}c${call}` } });
          assert.deepEqual(result.content, [{ type: 'text', text: `Echo: s${i}c${call}` }]);
        }
        assert.ok((await client.listTools()).tools.some((t) => t.name === 'get-sum'));
      }
      for (const [i, { transport }] of sessions.entries()) {
        const holder = ports[i] === a.port ? a : b;
        const sid = upstreamSid(transport.sessionId);
        assert.ok(holder.issued.has(sid), `session ${i} was opened on the replica it is pinned to`);
        assert.ok(holder.seen.filter((s) => s.sid === sid && s.method === 'POST').length >= 4, `session ${i}'s calls reached ${holder.name}`);
      }
      // The other replica really does not know a session: a hop would have failed, not passed unnoticed.
      const sid = upstreamSid(sessions[0].transport.sessionId);
      const other = ports[0] === a.port ? upstreams[1] : upstreams[0];
      const hop = await post(`http://127.0.0.1:${other.port}/mcp`, { jsonrpc: '2.0', id: 9, method: 'tools/list' }, { 'mcp-session-id': sid, 'mcp-protocol-version': '2025-06-18' });
      assert.ok(hop.status === 400 || hop.status === 404, `status ${hop.status}`);
      await hop.body?.cancel();
    } finally {
      await Promise.all(sessions.map((s) => s.client.close()));
    }
    assertNoHops([a, b]);
    assert.deepEqual([...a.hosts, ...b.hosts].filter((h) => h !== SERVICE_HOST), [], 'replicas see the Service name as Host');
  });

  it('the GET stream and DELETE of a session go to its replica', async () => {
    const init = await post(gw.url(80, '/mcp'), INIT);
    assert.equal(init.status, 200);
    const id = init.headers.get('mcp-session-id') ?? '';
    await init.body?.cancel();
    const holder = pinnedPort(id) === a.port ? a : b;
    const sid = upstreamSid(id);
    const initialized = await post(gw.url(80, '/mcp'), { jsonrpc: '2.0', method: 'notifications/initialized' }, { 'mcp-session-id': id });
    assert.equal(initialized.status, 202);

    const abort = new AbortController();
    const stream = await fetch(gw.url(80, '/mcp'), { headers: { accept: 'text/event-stream', 'mcp-session-id': id }, signal: abort.signal });
    assert.equal(stream.status, 200);
    for (let i = 0; i < 50 && !holder.seen.some((s) => s.sid === sid && s.method === 'GET'); i++) await new Promise((r) => setTimeout(r, 20));
    assert.ok(holder.seen.some((s) => s.sid === sid && s.method === 'GET'), 'the server stream was opened on the holder');
    abort.abort();
    await stream.body?.cancel().catch(() => undefined);

    const deleted = await fetch(gw.url(80, '/mcp'), { method: 'DELETE', headers: { 'mcp-session-id': id } });
    assert.equal(deleted.status, 200);
    assert.ok(holder.seen.some((s) => s.sid === sid && s.method === 'DELETE'), 'DELETE reached the holder');
    const gone = await post(`http://127.0.0.1:${holder.port}/mcp`, { jsonrpc: '2.0', id: 3, method: 'tools/list' }, { 'mcp-session-id': sid, 'mcp-protocol-version': '2025-06-18' });
    assert.ok(gone.status === 400 || gone.status === 404, `the holder ended the upstream session (status ${gone.status})`);
    await gone.body?.cancel();
    assertNoHops([a, b]);
  });

  it('a second gateway with the same SESSION_KEY resumes a session on the same replica', async () => {
    const { client, transport } = await connect(gw.url(80, '/mcp'));
    const sessionId = transport.sessionId;
    const holder = pinnedPort(sessionId) === a.port ? a : b;
    const sid = upstreamSid(sessionId);
    const resumed = new Client({ name: 'resumed', version: '1' });
    try {
      await resumed.connect(new StreamableHTTPClientTransport(new URL(second.url(80, '/mcp')), { sessionId }));
      const before = holder.seen.filter((s) => s.sid === sid).length;
      for (let call = 0; call < 4; call++) {
        const result = await resumed.callTool({ name: 'echo', arguments: { message: `elsewhere ${call}` } });
        assert.deepEqual(result.content, [{ type: 'text', text: `Echo: elsewhere ${call}` }]);
      }
      assert.ok(holder.seen.filter((s) => s.sid === sid).length >= before + 4);
    } finally {
      await resumed.close();
      await client.close();
    }
    assertNoHops([a, b]);
  });

  it('legacy HTTP+SSE clients keep their upstream session on one replica', async () => {
    const clients = await Promise.all([1, 2].map(() => connectSse(gw.url(80, '/mcp'))));
    try {
      for (const [i, client] of clients.entries()) {
        for (let call = 0; call < 3; call++) {
          const result = await client.callTool({ name: 'echo', arguments: { message: `sse${i}c${call}` } });
          assert.deepEqual(result.content, [{ type: 'text', text: `Echo: sse${i}c${call}` }]);
        }
      }
    } finally {
      await Promise.all(clients.map((c) => c.close()));
    }
    assertNoHops([a, b]);
  });

  it('Stateless: each request initialises on the next replica in turn', async () => {
    const before = [a.initializes, b.initializes];
    const { client } = await connect(gw.url(80, '/stateless'));
    try {
      for (let call = 0; call < 4; call++) await client.callTool({ name: 'echo', arguments: { message: 'x' } });
    } finally {
      await client.close();
    }
    assert.ok(a.initializes > before[0] && b.initializes > before[1], `initializes a ${before[0]}→${a.initializes}, b ${before[1]}→${b.initializes}`);
    assertNoHops([a, b]);
  });

  it('a session whose replica left the config gets the expired-session 404; the others carry on', async () => {
    const sessions = await Promise.all([1, 2].map(() => connect(gw.url(80, '/mcp'))));
    const onlyB = await startGateway(manifests([b]));
    try {
      const ports = sessions.map((s) => pinnedPort(s.transport.sessionId));
      assert.deepEqual(new Set(ports), new Set([a.port, b.port]), 'round-robin put one session on each replica');
      for (const [i, { transport }] of sessions.entries()) {
        const headers = { 'mcp-session-id': transport.sessionId ?? '', 'mcp-protocol-version': '2025-06-18' };
        const res = await post(onlyB.url(80, '/mcp'), { jsonrpc: '2.0', id: 5, method: 'tools/list' }, headers);
        if (ports[i] === b.port) {
          assert.equal(res.status, 200, 'the session on the remaining replica is served');
          await res.body?.cancel();
          continue;
        }
        assert.equal(res.status, 404);
        assert.deepEqual(await res.json(), { jsonrpc: '2.0', id: null, error: { code: -32600, message: 'Session not found: an upstream session expired; initialize again' } });
        for (const method of ['GET', 'DELETE']) {
          const other = await fetch(onlyB.url(80, '/mcp'), { method, headers: { ...headers, accept: 'text/event-stream' } });
          assert.equal(other.status, 404, method);
          await other.body?.cancel();
        }
      }
      const fresh = await connect(onlyB.url(80, '/mcp'));
      assert.equal(pinnedPort(fresh.transport.sessionId), b.port, 'a new session goes to the remaining replica');
      await fresh.client.close();
    } finally {
      await Promise.all(sessions.map((s) => s.client.close()));
      await onlyB.close();
    }
    assertNoHops([a, b]);
  });
});
