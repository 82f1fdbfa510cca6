/**
 * Response body effects on MCP answers, through a listening gateway, the MCP SDK client and a real
 * server-everything target (docs/mcp.md "Response effects"): a traffic or backend
 * `transformation.response.body` sees one JSON-RPC message — a JSON answer whole, an SSE answer
 * message by message (progress notifications, then the result), so an expression that parses the
 * body as JSON works on both. A failing expression answers the request with a JSON-RPC error
 * instead of hanging it.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { startGateway, type GatewayHarness } from '../support/gateway.ts';
import { httpGateway } from '../support/manifests.ts';
import { connect, connectSse, startEverything, type Upstream } from './support.ts';

/** Only a single JSON-RPC message parses: the whole SSE text of a streamed answer would not. */
const UPPER_RESULT = `"result" in json(response.body) ? string(response.body).replace("Echo:", "ECHO:").replace("completed", "COMPLETED") : string(response.body)`;
/** Fails on a tool's result (the initialize result and progress notifications pass). */
const FAIL_ON_RESULT = `"result" in json(response.body) && "content" in json(response.body).result ? string(json(response.body).nope) : string(response.body)`;

function manifests(up: Upstream): string {
  const variants = [
    { name: 'traffic', policy: `traffic: { transformation: { response: { body: '${UPPER_RESULT}' } } }` },
    { name: 'backend', policy: `backend: { transformation: { response: { body: '${UPPER_RESULT}' } } }` },
    { name: 'failing', policy: `traffic: { transformation: { response: { body: '${FAIL_ON_RESULT}' } } }` },
  ];
  return httpGateway() + `---
apiVersion: switchboard.dev/v1alpha1
kind: ProxyBackend
metadata: { name: everything }
spec:
  mcp:
    targets:
      - name: everything
        static: { host: 127.0.0.1, port: ${up.port} }
` + variants.map((v) => `---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: { name: ${v.name} }
spec:
  parentRefs: [{ name: gw }]
  rules:
    - matches: [{ path: { type: PathPrefix, value: /${v.name} } }]
      backendRefs: [{ group: switchboard.dev, kind: ProxyBackend, name: everything }]
---
apiVersion: switchboard.dev/v1alpha1
kind: ProxyPolicy
metadata: { name: ${v.name} }
spec:
  targetRefs: [{ group: gateway.networking.k8s.io, kind: HTTPRoute, name: ${v.name} }]
  ${v.policy}
`).join('');
}

describe('transformation.response.body on MCP answers', () => {
  let upstream: Upstream;
  let gw: GatewayHarness;
  const clients: Client[] = [];
  const client = async (route: string): Promise<Client> => {
    const { client: c } = await connect(gw.url(80, `/${route}`));
    clients.push(c);
    return c;
  };

  before(async () => {
    upstream = await startEverything();
    gw = await startGateway(manifests(upstream));
    assert.deepEqual(gw.applyErrors, []);
  });
  after(async () => {
    await Promise.all(clients.map((c) => c.close().catch(() => undefined)));
    await gw?.close();
    await upstream?.stop();
  });

  for (const route of ['traffic', 'backend']) {
    it(`${route}: a JSON answer is the message the expression sees`, async () => {
      const result = await (await client(route)).callTool({ name: 'echo', arguments: { message: 'hi' } });
      assert.deepEqual(result.content, [{ type: 'text', text: 'ECHO: hi' }]);
    });

    it(`${route}: an SSE answer is transformed message by message; notifications pass`, async () => {
      const progress: number[] = [];
      const result = await (await client(route)).callTool(
        { name: 'trigger-long-running-operation', arguments: { duration: 0.3, steps: 3 } },
        undefined,
        { onprogress: (p) => progress.push(p.progress) },
      );
      assert.deepEqual(progress, [1, 2, 3], 'every progress notification reached the client');
      const text = (result.content as { text?: string }[])[0]?.text ?? '';
      assert.match(text, /^Long running operation COMPLETED/);
    });
  }

  it('a legacy HTTP+SSE client: the answers on its GET stream are transformed message by message, the endpoint event passes', async () => {
    const legacy = await connectSse(gw.url(80, '/traffic'));
    clients.push(legacy);
    const result = await legacy.callTool({ name: 'echo', arguments: { message: 'hi' } });
    assert.deepEqual(result.content, [{ type: 'text', text: 'ECHO: hi' }]);
  });

  it('a failing expression on a JSON answer: HTTP 500 with a JSON-RPC error, data {status: 500, code: response_processing_failed}', async () => {
    const err = await (await client('failing')).callTool({ name: 'echo', arguments: { message: 'hi' } })
      .then(() => assert.fail('expected an error'), (e: unknown) => e as Error & { code?: number });
    assert.equal(err.code, 500, err.message);
    const body = /(\{"jsonrpc".*\})/.exec(err.message)?.[1];
    assert.ok(body, `a JSON-RPC body in: ${err.message}`);
    assert.deepEqual((JSON.parse(body) as { error?: { data?: unknown } }).error?.data, { status: 500, code: 'response_processing_failed' });
  });

  it('a failing expression on a streamed result: the request gets a JSON-RPC error, notifications still pass', async () => {
    const progress: number[] = [];
    const err = await (await client('failing')).callTool(
      { name: 'trigger-long-running-operation', arguments: { duration: 0.2, steps: 2 } },
      undefined,
      { onprogress: (p) => progress.push(p.progress) },
    ).then(() => assert.fail('expected an error'), (e: unknown) => e as Error & { code?: number; data?: { status?: number; code?: string } });
    assert.equal(err.code, -32603, err.message);
    assert.deepEqual(err.data, { status: 500, code: 'response_processing_failed' });
    assert.deepEqual(progress, [1, 2]);
  });
});
