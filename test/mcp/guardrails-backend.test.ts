import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { McpGuardrail } from '../../src/proxy/mcp/guardrails/gen/guardrail_pb.js';
import { publishBackends } from '../../src/proxy/policies/backend/service-targets.ts';
import { startGrpcServer, type RunningServer } from '../ext/servers.ts';
import { backend, connect, startEverything, startGateway, target, type Gateway, type Upstream } from './support.ts';

const KEY = 'service/default/guard:9000';

/**
 * A guardrail processor named by a Service backendRef (IR `backendKey`): its checks are spread over
 * the backend's ready endpoints, and follow the newest config's endpoints (issue 17 item 5).
 */
describe('MCP guardrails at a backend with two ready endpoints', () => {
  let upstream: Upstream;
  const processors: (RunningServer & { hits: number })[] = [];
  let gw: Gateway;

  const publish = (servers: readonly RunningServer[]) => publishBackends({
    [KEY]: { key: KEY, kind: 'Service', namespace: 'default', name: 'guard', rewriteHost: false, endpoints: servers.map((s) => ({ host: '127.0.0.1', port: s.port })) },
  });
  const callEcho = async (times: number) => {
    const { client } = await connect(gw.url);
    try {
      for (let i = 0; i < times; i++) await client.callTool({ name: 'echo', arguments: { message: `m${i}` } });
    } finally {
      await client.close();
    }
  };

  before(async () => {
    upstream = await startEverything();
    for (let i = 0; i < 2; i++) {
      const state = { hits: 0 };
      const server = await startGrpcServer((router) => router.service(McpGuardrail, {
        check() {
          state.hits++;
          return {};
        },
      }));
      processors.push(Object.defineProperty(server, 'hits', { get: () => state.hits }) as unknown as RunningServer & { hits: number });
    }
    publish([processors[0]]);
    // The URL is the translator's fallback for a backend without endpoints: never reached here.
    gw = await startGateway(backend([target('one', upstream)], {
      guardrails: [{ url: 'http://invalid.', backendKey: KEY, failureMode: 'FailClosed', methods: { 'tools/call': 'Request' } }],
    }));
  });
  after(async () => {
    await gw?.close();
    await Promise.all(processors.map((p) => p.close()));
    await upstream?.stop();
  });

  it('one ready endpoint: every check goes to it', async () => {
    await callEcho(2);
    assert.deepEqual(processors.map((p) => p.hits), [2, 0]);
  });

  it('a newer config with a second endpoint: the same processor spreads the checks over both', async () => {
    publish(processors);
    await callEcho(4);
    assert.deepEqual(processors.map((p) => p.hits), [4, 2]);
  });

  it('a newer config without one endpoint: the checks go to the other only', async () => {
    publish([processors[1]]);
    const before = processors.map((p) => p.hits);
    await callEcho(3);
    assert.deepEqual(processors.map((p) => p.hits), [before[0], before[1] + 3]);
  });
});
