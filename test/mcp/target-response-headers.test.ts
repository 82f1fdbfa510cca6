/**
 * Response headers from an MCP target's own `transformation.response` (a ProxyPolicy whose
 * targetRef's sectionName names the target) reach the client's HTTP answer when that answer is
 * the target's alone, and never a shared one (docs/mcp.md "Target backend policies"). Through a
 * listening gateway with the MCP SDK client (its fetch recorded, to see each answer's headers):
 * targets `one` and `two` are both a real server-everything, each with a ProxyPolicy that sets
 * `x-target` to its name and adds a header of its own; the route's traffic policy sets `x-target`
 * to `route` on every answer.
 *
 * - a tools/call routed to one carries one's headers and not two's, as a JSON answer and as an SSE
 *   answer (progress notifications start the stream after one's steps ran), and the other way round;
 *   the target's `x-target` replaces the route's (its effects come after the route's own);
 * - initialize, tools/list (fan-outs) and a batch with calls to both targets carry neither (the
 *   route's header only);
 * - a 2026-07-28 (stateless era) POST routed to one target carries its headers too;
 * - a legacy HTTP+SSE client's message POSTs (202, the answer on the stream) carry neither;
 * - on another backend (`/authz`), target one's own gRPC extAuth allows with a response header:
 *   one's calls carry it, two's and the shared answers do not;
 * - the ProxyPolicy's status says the member is applied in part (PartiallyApplied, its path named).
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { SSEClientTransport } from '@modelcontextprotocol/sdk/client/sse.js';
import type { FetchLike } from '@modelcontextprotocol/sdk/shared/transport.js';
import { create } from '@bufbuild/protobuf';
import { HeaderValueOption_HeaderAppendAction } from '../../src/proxy/ext/gen/envoy/config/core/v3/base_pb.js';
import { Authorization, CheckResponseSchema } from '../../src/proxy/ext/gen/envoy/service/auth/v3/external_auth_pb.js';
import { startGrpcServer, type RunningServer } from '../ext/servers.ts';
import { conditionOf, startGateway, type GatewayHarness } from '../support/gateway.ts';
import { httpGateway } from '../support/manifests.ts';
import { startEverything, type Upstream } from './support.ts';

/** Envoy ext_authz over gRPC: allows every check, with `x-authz: checked` for the client's response. */
function startAuthz(): Promise<RunningServer> {
  return startGrpcServer((router) => router.service(Authorization, {
    check() {
      const header = { header: { key: 'x-authz', value: 'checked' }, appendAction: HeaderValueOption_HeaderAppendAction.OVERWRITE_IF_EXISTS_OR_ADD };
      return create(CheckResponseSchema, { status: { code: 0 }, httpResponse: { case: 'okResponse', value: { responseHeadersToAdd: [header] } } });
    },
  }));
}

function manifests(up: Upstream, authz: RunningServer): string {
  const targets = `    targets:
      - name: one
        static: { host: 127.0.0.1, port: ${up.port}, path: /mcp }
      - name: two
        static: { host: 127.0.0.1, port: ${up.port}, path: /mcp }
`;
  const policy = (target: string) => `---
apiVersion: switchboard.dev/v1alpha1
kind: ProxyPolicy
metadata: { name: ${target} }
spec:
  targetRefs: [{ group: switchboard.dev, kind: ProxyBackend, name: pair, sectionName: ${target} }]
  backend: { transformation: { response: { set: [{ name: x-target, value: '"${target}"' }], add: [{ name: x-from-${target}, value: '"yes"' }] } } }
`;
  return `${httpGateway()}---
apiVersion: switchboard.dev/v1alpha1
kind: ProxyBackend
metadata: { name: pair }
spec:
  mcp:
${targets}${policy('one')}${policy('two')}---
apiVersion: switchboard.dev/v1alpha1
kind: ProxyPolicy
metadata: { name: route }
spec:
  targetRefs: [{ group: gateway.networking.k8s.io, kind: HTTPRoute, name: mcp }]
  traffic: { headerModifiers: { response: { set: [{ name: x-target, value: route }] } } }
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: { name: mcp }
spec:
  parentRefs: [{ name: gw }]
  rules:
    - matches: [{ path: { type: PathPrefix, value: /mcp } }]
      backendRefs: [{ group: switchboard.dev, kind: ProxyBackend, name: pair }]
---
apiVersion: switchboard.dev/v1alpha1
kind: ProxyBackend
metadata: { name: authz-pair }
spec:
  mcp:
${targets}---
apiVersion: switchboard.dev/v1alpha1
kind: ProxyPolicy
metadata: { name: authz-one }
spec:
  targetRefs: [{ group: switchboard.dev, kind: ProxyBackend, name: authz-pair, sectionName: one }]
  backend: { extAuth: { url: "${authz.url}", grpc: {} } }
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: { name: authz }
spec:
  parentRefs: [{ name: gw }]
  rules:
    - matches: [{ path: { type: PathPrefix, value: /authz } }]
      backendRefs: [{ group: switchboard.dev, kind: ProxyBackend, name: authz-pair }]
`;
}

/** One POST the SDK made: the JSON-RPC methods it carried and the headers of its answer. */
interface Seen {
  readonly methods: string[];
  readonly headers: Headers;
}

const OURS = ['x-target', 'x-from-one', 'x-from-two', 'x-authz'];

/** A fetch that records each POST's JSON-RPC methods (and tool names) with its answer's headers in `seen`. */
function recording(seen: Seen[]): FetchLike {
  return async (url, init) => {
    const res = await fetch(url, init);
    if (init?.method === 'POST' && typeof init.body === 'string') {
      const body = JSON.parse(init.body) as { method?: string; params?: { name?: string } } | { method?: string; params?: { name?: string } }[];
      const messages = Array.isArray(body) ? body : [body];
      seen.push({ methods: messages.flatMap((m) => [m.method ?? '', m.params?.name ?? '']), headers: res.headers });
    }
    return res;
  };
}

const ROUTE_ONLY = { 'x-target': 'route' };

/** The target headers an answer carries (absent ones left out). */
function targetHeaders(headers: Headers): Record<string, string> {
  return Object.fromEntries(OURS.flatMap((name) => (headers.get(name) === null ? [] : [[name, headers.get(name) as string]])));
}

describe('MCP: a target\'s own response headers on answers that are its alone', () => {
  let upstream: Upstream;
  let authz: RunningServer;
  let gw: GatewayHarness;
  let client: Client;
  let transport: StreamableHTTPClientTransport;
  const seen: Seen[] = [];
  const answerTo = (method: string, name?: string): Record<string, string> => {
    const found = seen.findLast((s) => s.methods.includes(method) && (name === undefined || s.methods.includes(name)));
    assert.ok(found, `a POST carrying ${method} ${name ?? ''} was seen: ${JSON.stringify(seen.map((s) => s.methods))}`);
    return targetHeaders(found.headers);
  };

  before(async () => {
    [upstream, authz] = await Promise.all([startEverything(), startAuthz()]);
    gw = await startGateway(manifests(upstream, authz));
    assert.deepEqual(gw.applyErrors, []);
    client = new Client({ name: 'switchboard-test', version: '1.0.0' });
    transport = new StreamableHTTPClientTransport(new URL(gw.url(80, '/mcp')), { fetch: recording(seen) });
    await client.connect(transport);
  });
  after(async () => {
    await client?.close().catch(() => undefined);
    await gw?.close();
    await Promise.all([upstream?.stop(), authz?.close()]);
  });

  it('initialize goes to both targets: neither target\'s headers', () => {
    assert.deepEqual(answerTo('initialize'), ROUTE_ONLY);
  });

  it('tools/list fans out: neither target\'s headers', async () => {
    const tools = (await client.listTools()).tools.map((t) => t.name);
    assert.ok(tools.includes('one_echo') && tools.includes('two_echo'), tools.join(', '));
    assert.deepEqual(answerTo('tools/list'), ROUTE_ONLY);
  });

  it('a tools/call routed to one: one\'s headers, not two\'s (JSON answer)', async () => {
    const result = await client.callTool({ name: 'one_echo', arguments: { message: 'hi' } });
    assert.deepEqual(result.content, [{ type: 'text', text: 'Echo: hi' }]);
    assert.deepEqual(answerTo('tools/call', 'one_echo'), { 'x-target': 'one', 'x-from-one': 'yes' });
  });

  it('a tools/call routed to two: two\'s headers, not one\'s', async () => {
    await client.callTool({ name: 'two_echo', arguments: { message: 'hi' } });
    assert.deepEqual(answerTo('tools/call', 'two_echo'), { 'x-target': 'two', 'x-from-two': 'yes' });
  });

  it('an SSE answer (progress before the result) carries the routed target\'s headers on its head', async () => {
    const progress: number[] = [];
    await client.callTool({ name: 'two_trigger-long-running-operation', arguments: { duration: 0.2, steps: 2 } }, undefined, { onprogress: (p) => progress.push(p.progress) });
    assert.deepEqual(progress, [1, 2], 'the answer was streamed');
    const found = seen.findLast((s) => s.methods.includes('two_trigger-long-running-operation'));
    assert.match(found?.headers.get('content-type') ?? '', /^text\/event-stream/);
    assert.deepEqual(answerTo('tools/call', 'two_trigger-long-running-operation'), { 'x-target': 'two', 'x-from-two': 'yes' });
  });

  it('a batch with calls to both targets is a shared answer: neither target\'s headers', async () => {
    const call = (id: number, name: string) => ({ jsonrpc: '2.0', id, method: 'tools/call', params: { name, arguments: { message: String(id) } } });
    const res = await fetch(gw.url(80, '/mcp'), {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-session-id': transport.sessionId ?? '', 'mcp-protocol-version': transport.protocolVersion ?? '2025-06-18' },
      body: JSON.stringify([call(101, 'one_echo'), call(102, 'two_echo')]),
    });
    const text = await res.text();
    assert.equal(res.status, 200, text);
    assert.match(text, /Echo: 101/);
    assert.match(text, /Echo: 102/);
    assert.deepEqual(targetHeaders(res.headers), ROUTE_ONLY);
  });

  it('a 2026-07-28 client\'s POST routed to one target carries that target\'s headers', async () => {
    const res = await fetch(gw.url(80, '/mcp'), {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json', 'mcp-protocol-version': '2026-07-28', 'mcp-method': 'tools/call', 'mcp-name': 'one_echo' },
      body: JSON.stringify({
        jsonrpc: '2.0', id: 7, method: 'tools/call',
        params: {
          name: 'one_echo', arguments: { message: 'modern' },
          _meta: { 'io.modelcontextprotocol/protocolVersion': '2026-07-28', 'io.modelcontextprotocol/clientInfo': { name: 't', version: '1' }, 'io.modelcontextprotocol/clientCapabilities': {} },
        },
      }),
    });
    const text = await res.text();
    assert.equal(res.status, 200, text);
    assert.match(text, /Echo: modern/);
    assert.deepEqual(targetHeaders(res.headers), { 'x-target': 'one', 'x-from-one': 'yes' });
  });

  it('a legacy HTTP+SSE client: its message POSTs are answered 202 before the call is served, the answer goes on the shared stream: neither target\'s headers', async () => {
    const legacySeen: Seen[] = [];
    const legacy = new Client({ name: 'switchboard-test', version: '1.0.0' });
    await legacy.connect(new SSEClientTransport(new URL(gw.url(80, '/mcp')), { fetch: recording(legacySeen) }));
    try {
      const result = await legacy.callTool({ name: 'one_echo', arguments: { message: 'legacy' } });
      assert.deepEqual(result.content, [{ type: 'text', text: 'Echo: legacy' }]);
      const call = legacySeen.findLast((s) => s.methods.includes('one_echo'));
      assert.ok(call, JSON.stringify(legacySeen.map((s) => s.methods)));
      assert.deepEqual(targetHeaders(call.headers), ROUTE_ONLY);
    } finally {
      await legacy.close();
    }
  });

  it('a target\'s own extAuth response headers: on its calls\' answers only', async () => {
    const authzSeen: Seen[] = [];
    const other = new Client({ name: 'switchboard-test', version: '1.0.0' });
    await other.connect(new StreamableHTTPClientTransport(new URL(gw.url(80, '/authz')), { fetch: recording(authzSeen) }));
    try {
      const last = (name: string) => targetHeaders(authzSeen.findLast((s) => s.methods.includes(name))?.headers ?? new Headers());
      await other.listTools();
      assert.deepEqual(last('tools/list'), {}, 'a list is shared by both targets');
      await other.callTool({ name: 'one_echo', arguments: { message: 'a' } });
      assert.deepEqual(last('one_echo'), { 'x-authz': 'checked' });
      await other.callTool({ name: 'two_echo', arguments: { message: 'b' } });
      assert.deepEqual(last('two_echo'), {}, 'two has no extAuth of its own');
    } finally {
      await other.close();
    }
  });

  it('the ProxyPolicy says the member applies in part: PartiallyApplied, its paths named', () => {
    const ancestors = gw.statusOf('ProxyPolicy', 'one').ancestors as { conditions: unknown }[];
    const accepted = conditionOf(ancestors[0]?.conditions, 'Accepted');
    assert.equal(accepted?.status, 'False', accepted?.message);
    assert.equal(accepted?.reason, 'PartiallyApplied');
    assert.match(accepted?.message ?? '', /spec\.backend\.transformation\.response\.set/);
    assert.match(accepted?.message ?? '', /spec\.backend\.transformation\.response\.add/);
    assert.equal(conditionOf(ancestors[0]?.conditions, 'Attached')?.status, 'True');
  });
});
