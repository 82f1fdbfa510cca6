import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { closedPort, startHttpServer, type RunningServer } from '../ext/servers.ts';
import { startGateway, type GatewayHarness } from '../support/gateway.ts';
import { httpGateway } from '../support/manifests.ts';
import { startKeyedFixture, type KeyedFixture } from './fixtures/keyed-server.ts';
import { connect, startEverything, type Upstream } from './support.ts';

/**
 * A target's own backend request steps (a ProxyPolicy `backend` whose targetRefs sectionName names
 * one MCP target) run on the calls the gateway makes to that target only (docs/mcp.md "Target
 * backend policies"): through a listening gateway with the MCP SDK client, target `a` an SDK-built
 * fixture that records a header, `b` another such fixture and `c` a real server-everything.
 *
 * - `tx`: a's transformation sets `x-step` and rewrites "shout" to "whoami" in the messages sent
 *   to a, and its `response.body` prefixes a's answers; b never sees the header, b's answer and
 *   c's `echo` of "shout" come back as the targets sent them.
 * - `tx-sse`: the same with a reached over legacy HTTP+SSE (its GET stream and message POSTs).
 * - `authz`: a's HTTP extAuth (with the message as body) refuses tools/call: lists and calls of
 *   c go on without asking it, the call of a's tool gets the JSON-RPC error with data
 *   {status: 403, code: forbidden} and a sees nothing of it.
 * - `authz-down`: a's extAuth FailClosed with its service down: under FailOpen the session is
 *   served without a (left out as an unavailable target is), nothing is sent to a.
 */
const SET_STEP = `transformation: { request: { set: [{ name: x-step, value: '"a-only"' }], body: 'string(request.body).replace("shout", "whoami")' }, response: { body: 'string(response.body).replace("\\"text\\":\\"", "\\"text\\":\\"a says: ")' } }`;

function manifests(fixtures: Record<string, KeyedFixture>, everything: Upstream, authz: RunningServer, dead: number): string {
  const target = (name: string, port: number, protocol = '') => `      - name: ${name}\n        static: { host: 127.0.0.1, port: ${port}${name === 'c' ? ', path: /mcp' : ''}${protocol} }\n`;
  const backend = (name: string, a: KeyedFixture, more: string, step: string, b?: KeyedFixture, aProtocol = '') => `---
apiVersion: switchboard.dev/v1alpha1
kind: ProxyBackend
metadata: { name: ${name} }
spec:
  mcp:
${more}    targets:
${target('a', a.port, aProtocol)}${b ? target('b', b.port) : ''}${target('c', everything.port)}---
apiVersion: switchboard.dev/v1alpha1
kind: ProxyPolicy
metadata: { name: ${name}-a }
spec:
  targetRefs: [{ group: switchboard.dev, kind: ProxyBackend, name: ${name}, sectionName: a }]
  backend: { ${step} }
`;
  const names = ['tx', 'tx-sse', 'authz', 'authz-down'];
  const rule = (name: string) => `    - matches: [{ path: { type: PathPrefix, value: /${name} } }]\n      backendRefs: [{ group: switchboard.dev, kind: ProxyBackend, name: ${name} }]\n`;
  return `${httpGateway()}${backend('tx', fixtures.txA, '', SET_STEP, fixtures.txB)}${backend('tx-sse', fixtures.sseA, '', SET_STEP, fixtures.sseB, ', protocol: SSE')}${backend('authz', fixtures.authzA, '', `extAuth: { url: "${authz.url}", http: {}, forwardBody: { maxSize: 65536 }, failureMode: FailClosed }`)}${backend('authz-down', fixtures.downA, '    failureMode: FailOpen\n', `extAuth: { url: "http://127.0.0.1:${dead}", http: {}, failureMode: FailClosed }`)}---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: { name: mcp }
spec:
  parentRefs: [{ name: gw }]
  rules:
${names.map(rule).join('')}`;
}

function text(result: unknown): string {
  const content = (result as { content?: { type: string; text?: string }[] }).content ?? [];
  return content.map((c) => c.text ?? '').join('');
}

describe('MCP target-scoped backend steps run per call to that target', () => {
  const fixtures: Record<string, KeyedFixture> = {};
  let everything: Upstream;
  let authz: RunningServer;
  /** The bodies the authorization service was asked about. */
  const asked: string[] = [];
  let gw: GatewayHarness;
  const clients: Client[] = [];
  const url = (path: string) => gw.url(80, `/${path}`);

  before(async () => {
    const [txA, txB, sseA, sseB, authzA, downA] = await Promise.all([
      startKeyedFixture('a', { record: 'x-step' }), startKeyedFixture('b', { record: 'x-step' }),
      startKeyedFixture('a', { record: 'x-step' }), startKeyedFixture('b', { record: 'x-step' }),
      startKeyedFixture('a'), startKeyedFixture('a'),
    ]);
    Object.assign(fixtures, { txA, txB, sseA, sseB, authzA, downA });
    everything = await startEverything();
    // Refuses tool calls, allows everything else (initialize, lists, notifications).
    authz = await startHttpServer((_req, body, res) => {
      asked.push(body.toString('utf8'));
      res.writeHead(body.toString('utf8').includes('"method":"tools/call"') ? 403 : 200).end('');
    });
    gw = await startGateway(manifests(fixtures, everything, authz, await closedPort()));
  });
  after(async () => {
    await Promise.all(clients.map((c) => c.close().catch(() => undefined)));
    await gw?.close();
    await Promise.all([...Object.values(fixtures).map((f) => f.stop()), everything?.stop(), authz?.close()]);
  });

  it('translates and applies cleanly', () => {
    assert.deepEqual(gw.applyErrors, []);
  });

  it("a target's transformation changes the headers and messages sent to it, never another target's", async () => {
    const { client } = await connect(url('tx'));
    clients.push(client);
    const tools = (await client.listTools()).tools.map((t) => t.name);
    assert.ok(tools.includes('a_whoami') && tools.includes('b_whoami') && tools.includes('c_echo'), tools.join(', '));
    // "shout" is rewritten to "whoami" in the message sent to a only, and only a's answer is transformed.
    assert.equal(text(await client.callTool({ name: 'a_shout', arguments: {} })), 'a says: a');
    assert.equal(text(await client.callTool({ name: 'b_whoami', arguments: {} })), 'b');
    assert.equal(text(await client.callTool({ name: 'c_echo', arguments: { message: 'shout' } })), 'Echo: shout');
    const posts = (f: KeyedFixture) => f.seen.filter((s) => s.method === 'POST');
    assert.ok(posts(fixtures.txA).length >= 3, 'a saw initialize, the list and the call');
    assert.deepEqual([...new Set(posts(fixtures.txA).map((s) => s.credential))], ['a-only'], 'every message POSTed to a carries its header');
    assert.ok(posts(fixtures.txB).length >= 3);
    assert.deepEqual(fixtures.txB.seen.filter((s) => s.credential !== undefined), [], 'b never sees a\'s header');
  });

  it("a legacy HTTP+SSE target: its stream's opening and every message POST get its steps; the other target never does", async () => {
    const { client } = await connect(url('tx-sse'));
    clients.push(client);
    assert.equal(text(await client.callTool({ name: 'a_shout', arguments: {} })), 'a says: a');
    assert.equal(text(await client.callTool({ name: 'b_whoami', arguments: {} })), 'b');
    const toA = fixtures.sseA.seen;
    assert.ok(toA.some((s) => s.method === 'GET' && s.path === '/sse'), JSON.stringify(toA));
    assert.ok(toA.some((s) => s.method === 'POST' && s.path === '/messages'));
    assert.deepEqual(toA.filter((s) => s.credential !== 'a-only'), [], 'every request to a carries its header');
    assert.ok(fixtures.sseB.seen.length > 0);
    assert.deepEqual(fixtures.sseB.seen.filter((s) => s.credential !== undefined), [], 'b never sees it');
  });

  it("a target's extAuth decides its calls only: another target's call is not asked about; a refused call is a JSON-RPC error with {status, code}", async () => {
    const { client } = await connect(url('authz'));
    clients.push(client);
    const tools = (await client.listTools()).tools.map((t) => t.name);
    assert.ok(tools.includes('a_whoami') && tools.includes('c_echo'), tools.join(', '));
    assert.equal(text(await client.callTool({ name: 'c_echo', arguments: { message: 'hi' } })), 'Echo: hi');
    assert.ok(asked.length > 0, 'a\'s messages were checked');
    assert.ok(asked.every((body) => !body.includes('echo')), 'c\'s messages never reach a\'s authorization service');
    const before = fixtures.authzA.seen.length;
    await assert.rejects(client.callTool({ name: 'a_whoami', arguments: {} }), (err: Error & { code?: number; data?: unknown }) => {
      assert.equal(err.code, -32001, err.message);
      assert.deepEqual(err.data, { status: 403, code: 'forbidden' });
      return true;
    });
    assert.equal(fixtures.authzA.seen.length, before, 'the refused call never reached a');
    assert.ok(asked.some((body) => body.includes('"name":"whoami"')), 'the service was asked about the message sent to a (its own tool name)');
  });

  it("a target's extAuth FailClosed with its service down leaves that target out (FailOpen), the others serve", async () => {
    const { client } = await connect(url('authz-down'));
    clients.push(client);
    const tools = (await client.listTools()).tools.map((t) => t.name);
    assert.ok(!tools.some((t) => t.startsWith('a_')), tools.join(', '));
    assert.ok(tools.includes('c_echo'));
    assert.equal(text(await client.callTool({ name: 'c_echo', arguments: { message: 'still here' } })), 'Echo: still here');
    assert.deepEqual(fixtures.downA.seen, [], 'nothing was sent to a');
  });
});
