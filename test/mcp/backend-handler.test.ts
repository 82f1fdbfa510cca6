import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { silentLogger } from '../../src/common/logger.ts';
import type { Backend } from '../../src/ir/types.ts';
import type { BackendHandler } from '../../src/proxy/backends/handlers.ts';
import { mcpHandlerFactory } from '../../src/proxy/mcp/backend-handler.ts';
import type { Forward } from '../../src/proxy/pipeline/exchange.ts';
import { RequestPolicyContext } from '../../src/proxy/policies/request-context.ts';
import { backend, connect, startEverything, target, type Upstream } from './support.ts';

/**
 * The runtime's view of the MCP handler: a traffic policy already buffered the body (the stream
 * is consumed), headers were rewritten by route filters, and done() must see status and bytes.
 */
describe('MCP backend handler in the proxy pipeline', () => {
  let upstream: Upstream;
  let server: Server;
  let handler: BackendHandler;
  let url: string;
  const finished: { status: number; bytes: number }[] = [];

  before(async () => {
    upstream = await startEverything();
    const ir = backend([target('one', upstream)]);
    handler = mcpHandlerFactory({ key: ir.key, mcp: ir } as unknown as Backend, { logger: silentLogger }) as BackendHandler;
    server = createServer((req, res) => {
      const forward = { clientPath: '/mcp', query: '', host: '127.0.0.1', headers: {}, labels: { gateway: 'gw', listener: 'l', route: 'r', backend: ir.key } } as unknown as Forward;
      const policy = new RequestPolicyContext(req, forward, 'http');
      // A policy read the whole body before dispatch, as body-inspecting members do.
      policy.readBody().then(() => {
        // A header filter added the session header the client sent under another name.
        const headers = { ...req.headers, ...(typeof req.headers['x-session'] === 'string' ? { 'mcp-session-id': req.headers['x-session'] } : {}) };
        handler.handle(req, res, {
          labels: forward.labels, path: '/mcp', headers: headers as Record<string, string>, policy, backendPolicy: undefined,
          done: (status, bytes) => finished.push({ status, bytes }),
        });
      }, () => res.destroy());
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`;
  });

  after(async () => {
    server?.closeAllConnections();
    await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
    await handler?.close();
    await upstream?.stop();
  });

  it('serves the buffered body and reports status and bytes', async () => {
    finished.length = 0;
    const { client } = await connect(url);
    try {
      const result = await client.callTool({ name: 'echo', arguments: { message: 'buffered by a policy' } });
      assert.match(JSON.stringify(result.content), /buffered by a policy/);
    } finally {
      await client.close();
    }
    assert.ok(finished.length >= 2, 'initialize and tools/call finished');
    const init = finished[0];
    assert.equal(init.status, 200);
    assert.ok(init.bytes > 0, 'the initialize result has a body');
  });

  it('reads headers as filters left them (the session id under the rewritten name)', async () => {
    const init = await fetch(url, {
      method: 'POST', headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 't', version: '1' } } }),
    });
    const session = init.headers.get('mcp-session-id');
    await init.text();
    assert.ok(session);
    const list = await fetch(url, {
      method: 'POST', headers: { 'content-type': 'application/json', accept: 'application/json', 'x-session': session },
      body: JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/list' }),
    });
    assert.equal(list.status, 200);
    const body = await list.json() as { result: { tools: { name: string }[] } };
    assert.ok(body.result.tools.some((t) => t.name === 'echo'));
  });
});
