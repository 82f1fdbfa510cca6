/**
 * Backend `http.requestTimeout` on an MCP target is a deadline per message: a tool call still
 * running at the deadline is aborted and the client gets a JSON-RPC error with
 * data {status: 504, code: upstream_timeout}; the session goes on (a later call succeeds). Both
 * upstream transports: Streamable HTTP (the answer's SSE stream head arrives at once) and legacy
 * SSE (the answer arrives as an event on the long GET stream).
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { McpError } from '@modelcontextprotocol/sdk/types.js';
import { backend, connect, startEverything, startGateway, target, type Gateway, type Upstream } from './support.ts';

const DEADLINE_MS = 500;

for (const transport of ['streamableHttp', 'sse'] as const) {
  describe(`backend http.requestTimeout on a ${transport} MCP target`, () => {
    let upstream: Upstream;
    let gw: Gateway;
    let client: Client;

    before(async () => {
      upstream = await startEverything(transport);
      gw = await startGateway(backend([{ ...target('everything', upstream), policies: { http: { requestTimeoutMs: DEADLINE_MS }, sources: {} } }]));
      ({ client } = await connect(gw.url));
    });
    after(async () => {
      await client?.close();
      await gw?.close();
      await upstream?.stop();
    });

    it('a tool call past the deadline: JSON-RPC -32603 with data {status: 504, code: upstream_timeout}, at the deadline', async () => {
      const started = Date.now();
      const err = await client.callTool({ name: 'trigger-long-running-operation', arguments: { duration: 3, steps: 3 } }).then(
        () => assert.fail('the call succeeded'),
        (e: unknown) => e,
      );
      assert.ok(err instanceof McpError, String(err));
      assert.equal(err.code, -32603);
      assert.deepEqual(err.data, { status: 504, code: 'upstream_timeout' });
      assert.ok(Date.now() - started < DEADLINE_MS + 1000, `answered at the deadline (${Date.now() - started} ms)`);
    });

    it('a call within the deadline afterwards: answered (the session survives)', async () => {
      const result = await client.callTool({ name: 'echo', arguments: { message: 'still here' } });
      assert.match(JSON.stringify(result), /still here/);
    });
  });
}
