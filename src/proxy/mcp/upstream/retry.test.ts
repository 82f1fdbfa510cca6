import assert from 'node:assert/strict';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import type { McpTargetIR } from '../../../ir/mcp.ts';
import { fakePolicyContext } from '../../testing/policy-context.ts';
import type { RetryPolicy } from '../../policies/context.ts';
import { UpstreamError } from './client.ts';
import { UpstreamPool } from './pool.ts';
import { sendWithRetry } from './retry.ts';
import { initializeAll } from '../initialize.ts';
import { McpError } from '../jsonrpc.ts';
import { silentLogger } from '../../../common/logger.ts';

/** A target whose answers a test scripts: each POST takes the next behaviour (the last one repeats). */
type Behaviour = 'ok' | 'sse' | 503 | 500 | 'broken-stream';

function answer(res: ServerResponse, body: string, behaviour: Behaviour): void {
  const message = JSON.parse(body) as { id?: number | string };
  const reply = JSON.stringify({ jsonrpc: '2.0', id: message.id ?? null, result: { ok: true } });
  if (behaviour === 503 || behaviour === 500) return void res.writeHead(behaviour, { 'content-type': 'text/plain' }).end('busy');
  if (message.id === undefined) return void res.writeHead(202).end();
  if (behaviour === 'ok') return void res.writeHead(200, { 'content-type': 'application/json' }).end(reply);
  res.writeHead(200, { 'content-type': 'text/event-stream' });
  if (behaviour === 'sse') return void res.end(`event: message\ndata: ${reply}\n\n`);
  // The head went out, then the stream breaks: the target may have run the call.
  res.write(': started\n\n', () => res.socket?.destroy());
}

describe('traffic retry and backend health on MCP target calls', () => {
  let port = 0;
  let script: Behaviour[] = [];
  let posts = 0;
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const parts: Buffer[] = [];
    req.on('data', (c: Buffer) => parts.push(c));
    req.on('end', () => {
      const behaviour = script[Math.min(posts, script.length - 1)];
      posts++;
      answer(res, Buffer.concat(parts).toString('utf8'), behaviour);
    });
  });
  before(async () => {
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as AddressInfo).port;
  });
  after(() => new Promise<void>((resolve) => server.close(() => resolve())));

  const target = (): McpTargetIR => ({ name: 'one', host: '127.0.0.1', port, path: '/mcp', protocol: 'StreamableHTTP' });
  const withRetry = (retry: RetryPolicy | undefined) => {
    const ctx = fakePolicyContext({});
    if (retry) ctx.upstream.retry = retry;
    return { policy: ctx };
  };
  const call = { jsonrpc: '2.0', id: 7, method: 'tools/call', params: { name: 'x' } } as const;

  const rows: { name: string; script: Behaviour[]; retry?: RetryPolicy; posts: number; ok: boolean; notification?: boolean }[] = [
    { name: 'a status the policy names is retried; the next answer is the result', script: [503, 'ok'], retry: { codes: new Set([503]), attempts: 2, backoffMs: 0 }, posts: 2, ok: true },
    { name: 'an SSE answer after a retried status', script: [503, 503, 'sse'], retry: { codes: new Set([503]), attempts: 2, backoffMs: 0 }, posts: 3, ok: true },
    { name: 'attempts run out: the last failure stands', script: [503], retry: { codes: new Set([503]), attempts: 2, backoffMs: 0 }, posts: 3, ok: false },
    { name: 'a status the policy does not name is not retried', script: [500, 'ok'], retry: { codes: new Set([503]), attempts: 2, backoffMs: 0 }, posts: 1, ok: false },
    { name: 'without a retry policy nothing is retried', script: [503, 'ok'], posts: 1, ok: false },
    { name: 'a stream that started (2xx) and broke is not resent', script: ['broken-stream', 'ok'], retry: { codes: new Set([503]), attempts: 2, backoffMs: 0 }, posts: 1, ok: false },
    { name: 'a notification refused with a named status is resent', script: [503, 'ok'], retry: { codes: new Set([503]), attempts: 1, backoffMs: 0 }, posts: 2, ok: true, notification: true },
  ];
  for (const row of rows) {
    it(row.name, async () => {
      script = row.script;
      posts = 0;
      const pool = new UpstreamPool([target()]);
      try {
        const client = pool.streamable(target(), undefined, undefined, withRetry(row.retry));
        const sent = row.notification ? client.send({ jsonrpc: '2.0', method: 'notifications/initialized' }) : client.request(call, () => undefined);
        if (row.ok) await sent;
        else await assert.rejects(sent, UpstreamError);
        assert.equal(posts, row.posts);
      } finally {
        await pool.close();
      }
    });
  }

  it('waits the backoff between attempts', async () => {
    script = [503, 'ok'];
    posts = 0;
    const pool = new UpstreamPool([target()]);
    try {
      const started = Date.now();
      await pool.streamable(target(), undefined, undefined, withRetry({ codes: new Set([503]), attempts: 1, backoffMs: 150 })).request(call, () => undefined);
      assert.ok(Date.now() - started >= 140, `waited ${Date.now() - started} ms`);
    } finally {
      await pool.close();
    }
  });

  it('a failure to connect is retried; another transport error is not', async () => {
    const refused = Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' });
    const reset = Object.assign(new Error('other side closed'), { code: 'UND_ERR_SOCKET' });
    const policy: RetryPolicy = { codes: new Set(), attempts: 3, backoffMs: 0 };
    let tries = 0;
    const outcomes: number[] = [];
    const fine = { statusCode: 200 } as Awaited<ReturnType<Parameters<typeof sendWithRetry>[0]>>;
    const answered = await sendWithRetry(() => (++tries < 3 ? Promise.reject(refused) : Promise.resolve(fine)), policy, undefined, (s) => outcomes.push(s));
    assert.equal(answered, fine);
    assert.equal(tries, 3);
    assert.deepEqual(outcomes, [503, 503, 200], 'health hears every attempt');
    tries = 0;
    await assert.rejects(sendWithRetry(() => (++tries, Promise.reject(reset)), policy, undefined, undefined), /other side closed/);
    assert.equal(tries, 1);
  });

  it('health: an unhealthy answer evicts the target; its calls fail as evicted with nothing sent', async () => {
    script = [500];
    posts = 0;
    const health = { unhealthyCondition: 'response.code >= 500', eviction: { durationMs: 60_000 } };
    const policy = { sources: {}, subBackends: { one: { sources: {}, health } } };
    const pool = new UpstreamPool([target()]);
    try {
      const ctx = { backendPolicy: policy };
      const client = pool.streamable(target(), undefined, undefined, ctx);
      await assert.rejects(client.request(call, () => undefined), (e: unknown) => e instanceof UpstreamError && e.failure === 'unavailable');
      assert.equal(posts, 1);
      const again = pool.streamable(target(), undefined, undefined, ctx);
      await assert.rejects(again.request(call, () => undefined), (e: unknown) => e instanceof UpstreamError && e.failure === 'evicted');
      assert.equal(posts, 1, 'nothing reached the evicted target');
      const fresh = await pool.fresh(target(), undefined, undefined, ctx);
      await assert.rejects(fresh.request(call, () => undefined), (e: unknown) => e instanceof UpstreamError && e.failure === 'evicted');
      assert.equal(posts, 1);
      // Another route without a health policy still reaches it: eviction belongs to the policy that tracks it.
      script = ['ok'];
      await pool.streamable(target(), undefined, undefined, {}).request(call, () => undefined);
      assert.equal(posts, 2);
    } finally {
      await pool.close();
    }
  });

  it('health: initialize leaves an evicted target out under FailClosed; all evicted is a 503 no_healthy_upstream', async () => {
    const health = { unhealthyCondition: 'response.code >= 500', eviction: { durationMs: 60_000 } };
    const two: McpTargetIR = { ...target(), name: 'two' };
    const policy = { sources: {}, health };
    const pool = new UpstreamPool([target(), two]);
    const ctx = { backendPolicy: policy };
    try {
      script = [500];
      await assert.rejects(pool.streamable(target(), undefined, undefined, ctx).request(call, () => undefined));
      script = ['ok'];
      posts = 0;
      const joined = await initializeAll(pool, [target(), two], {}, 'FailClosed', silentLogger, undefined, ctx);
      assert.deepEqual([...joined.keys()], ['two']);
      assert.equal(posts, 2, 'initialize and initialized went to `two` only');
      script = [500];
      await assert.rejects(pool.streamable(two, undefined, undefined, ctx).request(call, () => undefined));
      const err = await initializeAll(pool, [target(), two], {}, 'FailClosed', silentLogger, undefined, ctx).then(() => assert.fail('expected a refusal'), (e: unknown) => e);
      assert.ok(err instanceof McpError);
      assert.deepEqual(err.data, { status: 503, code: 'no_healthy_upstream' });
    } finally {
      await pool.close();
    }
  });

  it('health without eviction: failures lower the score but never evict', async () => {
    script = [500];
    posts = 0;
    const policy = { sources: {}, health: {} };
    const pool = new UpstreamPool([target()]);
    try {
      for (let i = 0; i < 3; i++) {
        await assert.rejects(pool.streamable(target(), undefined, undefined, { backendPolicy: policy }).request(call, () => undefined), (e: unknown) => e instanceof UpstreamError && e.failure === 'unavailable');
      }
      assert.equal(posts, 3);
    } finally {
      await pool.close();
    }
  });
});
