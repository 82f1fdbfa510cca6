/**
 * The agent-runtime handler on its own (no pipeline): the gateway's answers when the invocation
 * cannot be made. The e2e matrix (test/e2e/matrix/agent-runtime.test.ts) covers invocations that
 * reach a runtime, policies and streaming.
 */
import assert from 'node:assert/strict';
import { createServer, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import type { HandlerRequest } from '../handlers.ts';
import { unusedPort } from '../../../../test/support/ports.ts';
import { AgentRuntimeHandler } from './handler.ts';

const ARN = 'arn:aws:bedrock-agentcore:us-west-2:123456789012:runtime/a-1';
const KEYS = { AWS_ACCESS_KEY_ID: 'AKIDUNIT', AWS_SECRET_ACCESS_KEY: 'unit-secret' };

/** A port nothing listens on: a server opened and closed. */
describe('agent runtime handler: the gateway\'s own answers', () => {
  let server: Server;
  let handler: AgentRuntimeHandler;
  let done: { status: number; bytes: number }[];

  /** Serves every request with a handler made for `env` (swapped per case). */
  before(async () => {
    done = [];
    server = createServer((req, res) => {
      const call = { labels: {} as HandlerRequest['labels'], path: req.url ?? '/', headers: req.headers as Record<string, string>, policy: undefined, backendPolicy: undefined, done: (status: number, bytes: number) => done.push({ status, bytes }) };
      handler.handle(req, res, call);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  });
  after(async () => {
    await handler?.close();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });

  const post = (body: string | Buffer, headers: Record<string, string> = {}) => new Promise<{ status: number; body: { error: { code: string; message: string } } }>((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port: (server.address() as AddressInfo).port, method: 'POST', path: '/', headers: { 'content-type': 'application/json', ...headers } }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: JSON.parse(Buffer.concat(chunks).toString()) as never }));
    });
    req.on('error', reject);
    req.end(body);
  });

  const cases: readonly { name: string; env: () => Promise<NodeJS.ProcessEnv>; body?: Buffer; status: number; code: string; message?: RegExp }[] = [
    { name: 'the endpoint refuses the connection: 502 upstream_connect_failed', env: async () => ({ ...KEYS, AWS_ENDPOINT_URL_BEDROCK_AGENTCORE: `http://127.0.0.1:${await unusedPort()}` }), status: 502, code: 'upstream_connect_failed' },
    { name: 'no cloud-A keys anywhere: 500 backend_policy_failed, the keys not named', env: async () => ({ AWS_ENDPOINT_URL_BEDROCK_AGENTCORE: 'http://127.0.0.1:9' }), status: 500, code: 'backend_policy_failed', message: /no credential for the backend/ },
    { name: 'a payload past the 2 MiB buffer: 413 payload_too_large', env: async () => ({ ...KEYS, AWS_ENDPOINT_URL_BEDROCK_AGENTCORE: 'http://127.0.0.1:9' }), body: Buffer.alloc(2 * 1024 * 1024 + 1, 0x61), status: 413, code: 'payload_too_large' },
  ];
  for (const c of cases) {
    it(c.name, async () => {
      await handler?.close();
      handler = new AgentRuntimeHandler({ runtimeId: ARN, region: 'us-west-2' }, { env: await c.env() });
      const before = done.length;
      const res = await post(c.body ?? '{"prompt":"x"}');
      assert.equal(res.status, c.status);
      assert.equal(res.body.error.code, c.code);
      if (c.message) assert.match(res.body.error.message, c.message);
      assert.equal(done.length, before + 1, 'done is called once');
      assert.equal(done.at(-1)?.status, c.status);
    });
  }
});
