import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { InMemorySpanExporter } from '@opentelemetry/sdk-trace';
import { compileTracing } from '../../telemetry/tracing/compile.ts';
import { runTraced, startRequestTrace } from '../../telemetry/tracing/request-trace.ts';
import { TokenCache, type FetchedToken } from './token-cache.ts';

/** A token endpoint the test drives: counts fetches and answers each one when told to. */
function endpoint() {
  const waiting: { resolve: (t: FetchedToken) => void; reject: (e: Error) => void }[] = [];
  let fetches = 0;
  return {
    get fetches() {
      return fetches;
    },
    fetch: () => {
      fetches++;
      return new Promise<FetchedToken>((resolve, reject) => waiting.push({ resolve, reject }));
    },
    answer(token: string, expiresInS: number) {
      const next = waiting.shift();
      assert.ok(next, 'a fetch is waiting');
      next.resolve({ token, expiresInS });
    },
    fail(message: string) {
      const next = waiting.shift();
      assert.ok(next, 'a fetch is waiting');
      next.reject(new Error(message));
    },
  };
}

/** A cache on a clock the test moves by hand. */
function cacheAt(start = 1_000_000) {
  const clock = { now: start };
  return { clock, cache: new TokenCache(() => clock.now) };
}

async function settled<T>(p: Promise<T>): Promise<T> {
  await new Promise((resolve) => setImmediate(resolve));
  return p;
}

describe('TokenCache', () => {
  it('fetches once and serves the cached token until a minute before expiry', async () => {
    const { clock, cache } = cacheAt();
    const ep = endpoint();
    const first = cache.get('k', ep.fetch);
    ep.answer('t1', 3600);
    assert.equal(await first, 't1');
    clock.now += 3600_000 - 60_000 - 1;
    assert.equal(await cache.get('k', ep.fetch), 't1');
    assert.equal(ep.fetches, 1);
  });

  it('refreshes in the background from a minute before expiry, serving the still valid token meanwhile', async () => {
    const { clock, cache } = cacheAt();
    const ep = endpoint();
    const first = cache.get('k', ep.fetch);
    ep.answer('t1', 3600);
    await first;
    clock.now += 3600_000 - 60_000;
    assert.equal(await cache.get('k', ep.fetch), 't1', 'no caller waits while the old token is valid');
    assert.equal(await cache.get('k', ep.fetch), 't1', 'a second caller joins the refresh in flight');
    assert.equal(ep.fetches, 2);
    ep.answer('t2', 3600);
    await settled(Promise.resolve());
    assert.equal(await cache.get('k', ep.fetch), 't2');
    assert.equal(ep.fetches, 2);
  });

  it('an expired token is never served: callers wait for the new one', async () => {
    const { clock, cache } = cacheAt();
    const ep = endpoint();
    const first = cache.get('k', ep.fetch);
    ep.answer('t1', 600);
    await first;
    clock.now += 600_000;
    const next = cache.get('k', ep.fetch);
    ep.answer('t2', 600);
    assert.equal(await next, 't2');
  });

  it('concurrent callers share one fetch', async () => {
    const { cache } = cacheAt();
    const ep = endpoint();
    const calls = [cache.get('k', ep.fetch), cache.get('k', ep.fetch), cache.get('k', ep.fetch)];
    assert.equal(ep.fetches, 1);
    ep.answer('shared', 3600);
    assert.deepEqual(await Promise.all(calls), ['shared', 'shared', 'shared']);
  });

  it('keys are cached separately', async () => {
    const { cache } = cacheAt();
    const ep = endpoint();
    const a = cache.get('a', ep.fetch);
    const b = cache.get('b', ep.fetch);
    assert.equal(ep.fetches, 2);
    ep.answer('ta', 3600);
    ep.answer('tb', 3600);
    assert.deepEqual([await a, await b], ['ta', 'tb']);
  });

  it('a failed fetch reaches every waiting caller and is not cached', async () => {
    const { cache } = cacheAt();
    const ep = endpoint();
    const calls = [cache.get('k', ep.fetch), cache.get('k', ep.fetch)];
    ep.fail('token endpoint answered 503');
    for (const call of calls) await assert.rejects(call, /503/);
    const retry = cache.get('k', ep.fetch);
    ep.answer('t', 3600);
    assert.equal(await retry, 't');
    assert.equal(ep.fetches, 2);
  });

  it('a failed background refresh keeps the valid token; the next caller tries again', async () => {
    const { clock, cache } = cacheAt();
    const ep = endpoint();
    const first = cache.get('k', ep.fetch);
    ep.answer('t1', 3600);
    await first;
    clock.now += 3600_000 - 30_000;
    assert.equal(await cache.get('k', ep.fetch), 't1');
    ep.fail('down');
    await settled(Promise.resolve());
    assert.equal(await cache.get('k', ep.fetch), 't1');
    assert.equal(ep.fetches, 3);
    ep.answer('t2', 3600);
    await settled(Promise.resolve());
    assert.equal(await cache.get('k', ep.fetch), 't2');
  });

  it('a short-lived token is still cached, refreshed after half its lifetime', async () => {
    const { clock, cache } = cacheAt();
    const ep = endpoint();
    const first = cache.get('k', ep.fetch);
    ep.answer('short', 60);
    await first;
    clock.now += 29_999;
    assert.equal(await cache.get('k', ep.fetch), 'short');
    assert.equal(ep.fetches, 1);
    clock.now += 1;
    assert.equal(await cache.get('k', ep.fetch), 'short');
    assert.equal(ep.fetches, 2);
  });

  it('the lifetime counts from when the fetch started, not when it answered', async () => {
    const { clock, cache } = cacheAt();
    const ep = endpoint();
    const first = cache.get('k', ep.fetch);
    clock.now += 10_000; // a slow token endpoint
    ep.answer('t1', 3600);
    await first;
    clock.now += 3600_000 - 60_000 - 10_000;
    await cache.get('k', ep.fetch);
    assert.equal(ep.fetches, 2);
  });

  it('stays bounded: expired entries go first, then the least recently fetched', async () => {
    let now = 0;
    const cache = new TokenCache(() => now, 3);
    const value = (token: string, expiresInS: number) => () => Promise.resolve({ token, expiresInS });
    await cache.get('short', value('s', 10));
    await cache.get('a', value('a', 3600));
    await cache.get('b', value('b', 3600));
    now = 20_000;
    await cache.get('c', value('c', 3600));
    assert.equal(cache.size, 3, 'the expired entry made room');
    await cache.get('d', value('d', 3600));
    assert.equal(cache.size, 3);
    let fetched = 0;
    assert.equal(await cache.get('a', () => (fetched++, Promise.resolve({ token: 'a2', expiresInS: 3600 }))), 'a2', 'the oldest entry was dropped and is fetched again');
    assert.equal(await cache.get('d', () => (fetched++, Promise.resolve({ token: 'd2', expiresInS: 3600 }))), 'd', 'the newest entry stayed');
    assert.equal(fetched, 1);
  });

  it('holds any credential value, not only strings', async () => {
    const cache = new TokenCache();
    const session = { accessKeyId: 'ASIA', secretAccessKey: 's', sessionToken: 't' };
    assert.equal(await cache.get('sts k', () => Promise.resolve({ token: session, expiresInS: 3600 })), session);
    assert.equal(await cache.get<typeof session>('sts k', () => Promise.reject(new Error('not fetched again'))), session);
  });
});

describe('TokenCache on a traced request', () => {
  it('a fetch is a token_endpoint CLIENT span under the request span; a cached token makes none', async () => {
    const exporter = new InMemorySpanExporter();
    const tracing = compileTracing({ url: 'http://x', randomSampling: 'true' }, { endpoint: () => 'http://x', exporter }, () => undefined);
    assert.ok(tracing);
    const req = { method: 'GET', url: '/', httpVersion: '1.1', headers: {}, socket: {} } as unknown as Parameters<typeof startRequestTrace>[1];
    const trace = startRequestTrace(tracing, req, 'http');
    assert.ok(trace);
    const cache = new TokenCache();
    await runTraced(trace, async () => {
      assert.equal(await cache.get('k', async () => ({ token: 't1', expiresInS: 3600 })), 't1');
      assert.equal(await cache.get('k', async () => ({ token: 't2', expiresInS: 3600 })), 't1');
    });
    trace.end(200, { gateway: '', listener: '', route: '', backend: '' });
    await tracing.provider.forceFlush();
    const spans = exporter.getFinishedSpans();
    await tracing.provider.shutdown();
    const fetches = spans.filter((s) => s.name === 'token_endpoint');
    assert.equal(fetches.length, 1);
    assert.equal(fetches[0].parentSpanContext?.spanId, trace.span.spanContext().spanId);
  });
});
