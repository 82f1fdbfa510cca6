import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { CreateMessageRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { backend, connect, startEverything, startGateway, target, type Upstream } from './support.ts';

const INIT = { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } } };
const LIST = { jsonrpc: '2.0', id: 2, method: 'tools/list', params: {} };

async function post(url: string, body: unknown, headers: Record<string, string> = {}): Promise<Response> {
  return fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers }, body: JSON.stringify(body) });
}

describe('MCP gateway sessions', () => {
  let a: Upstream;
  let b: Upstream;
  before(async () => {
    [a, b] = await Promise.all([startEverything(), startEverything()]);
  });
  after(async () => {
    await Promise.all([a?.stop(), b?.stop()]);
  });

  it('a session is resumed by another handler instance holding the same key', async () => {
    const ir = backend([target('alpha', a), target('beta', b)]);
    const first = await startGateway(ir);
    const second = await startGateway(ir);
    const { client, transport } = await connect(first.url);
    try {
      const sessionId = transport.sessionId;
      assert.ok(sessionId?.startsWith('sb1.'));
      const resumed = new Client({ name: 'resumed', version: '1' });
      await resumed.connect(new StreamableHTTPClientTransport(new URL(second.url), { sessionId }));
      const result = await resumed.callTool({ name: 'alpha_echo', arguments: { message: 'elsewhere' } });
      assert.deepEqual(result.content, [{ type: 'text', text: 'Echo: elsewhere' }]);
      await resumed.close();
    } finally {
      await client.close();
      await Promise.all([first.close(), second.close()]);
    }
  });

  it('tampered, foreign and unknown session ids get 404; a missing one 400', async () => {
    const gw = await startGateway(backend([target('alpha', a)]));
    try {
      const init = await post(gw.url, INIT);
      assert.equal(init.status, 200);
      const id = init.headers.get('mcp-session-id') ?? '';
      await init.body?.cancel();
      const flipped = id.slice(0, -2) + (id.at(-2) === 'A' ? 'B' : 'A') + id.at(-1);
      const cases = [
        { name: 'tampered', header: flipped, status: 404 },
        { name: 'not ours', header: 'some-upstream-session', status: 404 },
        { name: 'valid', header: id, status: 200 },
      ];
      for (const c of cases) {
        const res = await post(gw.url, LIST, { 'mcp-session-id': c.header });
        assert.equal(res.status, c.status, c.name);
        await res.body?.cancel();
      }
      const missing = await post(gw.url, LIST);
      assert.equal(missing.status, 400);
      await missing.body?.cancel();

      const deleted = await fetch(gw.url, { method: 'DELETE', headers: { 'mcp-session-id': id } });
      assert.equal(deleted.status, 200);
      const afterDelete = await post(gw.url, LIST, { 'mcp-session-id': id });
      assert.equal(afterDelete.status, 404, 'the upstream sessions are gone after DELETE');
      await afterDelete.body?.cancel();
    } finally {
      await gw.close();
    }
  });

  it('a session sealed for another backend is not accepted', async () => {
    const one = await startGateway(backend([target('alpha', a)]));
    const other = await startGateway(backend([target('alpha', a)], { key: 'backend/default/other' }));
    try {
      const init = await post(one.url, INIT);
      const id = init.headers.get('mcp-session-id') ?? '';
      await init.body?.cancel();
      const res = await post(other.url, LIST, { 'mcp-session-id': id });
      assert.equal(res.status, 404);
      await res.body?.cancel();
    } finally {
      await Promise.all([one.close(), other.close()]);
    }
  });

  it('Stateless: no session id; every request opens short upstream sessions', async () => {
    const gw = await startGateway(backend([target('alpha', a), target('beta', b)], { sessionRouting: 'Stateless' }));
    const { client, transport } = await connect(gw.url);
    try {
      assert.equal(transport.sessionId, undefined);
      const result = await client.callTool({ name: 'beta_echo', arguments: { message: 'stateless' } });
      assert.deepEqual(result.content, [{ type: 'text', text: 'Echo: stateless' }]);
      assert.ok((await client.listTools()).tools.some((t) => t.name === 'alpha_get-sum'));
      const get = await fetch(gw.url, { headers: { accept: 'text/event-stream', 'mcp-session-id': 'x' } });
      assert.equal(get.status, 405);
      await get.body?.cancel();
    } finally {
      await client.close();
      await gw.close();
    }
  });

  it('sampling: a server-to-client request reaches the client and its answer reaches the target that asked', async () => {
    const gw = await startGateway(backend([target('alpha', a), target('beta', b)]));
    const client = new Client({ name: 'sampler', version: '1' }, { capabilities: { sampling: {} } });
    client.setRequestHandler(CreateMessageRequestSchema, () => ({ model: 'test-model', role: 'assistant' as const, content: { type: 'text' as const, text: 'sampled answer' } }));
    await client.connect(new StreamableHTTPClientTransport(new URL(gw.url)));
    try {
      const result = await client.callTool({ name: 'beta_trigger-sampling-request', arguments: { prompt: 'hello', maxTokens: 5 } });
      assert.match(JSON.stringify(result.content), /sampled answer/);
    } finally {
      await client.close();
      await gw.close();
    }
  });
});
