/**
 * Global rate limits against a rate-limit service over the real Envoy RLS gRPC API: an in-process
 * double (rate-limit-service.ts) counting in memory. Each descriptor's window starts at its first
 * hit and lasts one unit, so the test never depends on wall-clock boundaries.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createActivation } from '../../src/cel/index.ts';
import { GlobalRateLimitClient, type GlobalRateLimitConfig, type RateLimitDecision } from '../../src/proxy/ext/ratelimit/index.ts';
import { RateLimitUnit } from '../../src/proxy/ext/gen/envoy/type/v3/ratelimit_unit_pb.js';
import { startRateLimitService, type RunningRateLimitService } from './rate-limit-service.ts';
import { closedPort } from './servers.ts';

/** Limits per minute by the first entry's name, unless the descriptor overrides it. */
const LIMITS: Record<string, number> = { user: 3, tokens_user: 100 };

describe('global rate limit (RLS over gRPC)', () => {
  let rls: RunningRateLimitService;

  before(async () => {
    rls = await startRateLimitService({ rules: (_domain, entries) => ({ requestsPerUnit: LIMITS[entries[0]?.key ?? ''] ?? 1000, unit: RateLimitUnit.MINUTE }) });
  });
  after(async () => {
    await rls?.close();
  });

  const activation = (user: string, usage?: { inputTokens: number; outputTokens: number }) =>
    createActivation({ request: { method: 'POST', url: '/v1/chat', headers: { 'x-user': user } }, ...(usage ? { llm: usage } : {}) });
  const header = (d: RateLimitDecision, name: string) => d.headers.find(([n]) => n === name)?.[1];

  it('counts request descriptors from CEL and answers 429 with retry-after and rate-limit headers', async () => {
    const client = new GlobalRateLimitClient({ url: rls.url, domain: 'gw', descriptors: [{ entries: [{ name: 'user', expression: 'request.headers["x-user"]' }] }] });
    try {
      const decisions = [];
      for (let i = 0; i < 4; i++) decisions.push(await client.shouldRateLimit(activation('alice')));
      assert.deepEqual(decisions.map((d) => d.allowed), [true, true, true, false]);
      assert.equal(header(decisions[0], 'x-ratelimit-limit'), '3');
      assert.equal(header(decisions[0], 'x-ratelimit-remaining'), '2');
      assert.equal(header(decisions[2], 'x-ratelimit-remaining'), '0');
      const denied = decisions[3];
      assert.ok(!denied.allowed && denied.status === 429 && denied.reason === 'over_limit');
      const reset = Number(header(denied, 'x-ratelimit-reset'));
      assert.ok(reset >= 1 && reset <= 60, `reset ${reset}`);
      assert.equal(header(denied, 'retry-after'), String(reset));
      assert.equal((await client.shouldRateLimit(activation('bob'))).allowed, true, 'another descriptor value has its own budget');
      assert.deepEqual(rls.requests.at(-1)?.descriptors.map((d) => d.entries.map((e) => [e.key, e.value])), [[['user', 'bob']]]);
      assert.equal(rls.requests.at(-1)?.domain, 'gw');
    } finally {
      client.close();
    }
  });

  it('sends cost as hits and limitOverride as the descriptor limit; skips descriptors whose entry fails', async () => {
    const client = new GlobalRateLimitClient({
      url: rls.url, domain: 'cost', descriptors: [
        { entries: [{ name: 'user', expression: 'request.headers["x-user"]' }], cost: '2', limitOverride: '{"unit": "Hour", "requestsPerUnit": 5}' },
        { entries: [{ name: 'missing', expression: 'request.headers["x-absent"]' }] },
      ],
    });
    try {
      const d1 = await client.shouldRateLimit(activation('carol'));
      assert.equal(rls.requests.at(-1)?.hitsAddend, 2);
      assert.equal(rls.requests.at(-1)?.descriptors.length, 1, 'the failing descriptor is not sent');
      assert.equal(rls.requests.at(-1)?.descriptors[0].limit?.unit, RateLimitUnit.HOUR);
      assert.equal(header(d1, 'x-ratelimit-remaining'), '3');
      assert.equal((await client.shouldRateLimit(activation('carol'))).allowed, true);
      assert.equal((await client.shouldRateLimit(activation('carol'))).allowed, false, '6 > 5');
    } finally {
      client.close();
    }
  });

  it('charges Tokens descriptors after completion from usage, holding back later requests', async () => {
    const config: GlobalRateLimitConfig = { url: rls.url, domain: 'tokens', descriptors: [{ entries: [{ name: 'tokens_user', expression: 'request.headers["x-user"]' }], unit: 'Tokens' }] };
    const client = new GlobalRateLimitClient(config);
    try {
      assert.equal(client.countsTokens, true);
      assert.equal((await client.shouldRateLimit(activation('dave'))).allowed, true);
      assert.equal(await client.recordUsage(activation('dave', { inputTokens: 60, outputTokens: 50 })), true);
      assert.equal(rls.requests.at(-1)?.hitsAddend, 110, 'default cost is the total token count');
      const after = await client.shouldRateLimit(activation('dave'));
      assert.equal(after.allowed, false, '1 + 110 + 1 > 100');
      assert.equal(await client.recordUsage(activation('dave')), true, 'no usage known: nothing is charged');
    } finally {
      client.close();
    }
  });

  it('applies failureMode when the service is down', async () => {
    const url = `http://127.0.0.1:${await closedPort()}`;
    const descriptors = [{ entries: [{ name: 'user', expression: '"x"' }] }];
    const closed = new GlobalRateLimitClient({ url, domain: 'd', descriptors }, { timeoutMs: 500 });
    const open = new GlobalRateLimitClient({ url, domain: 'd', descriptors, failureMode: 'FailOpen' }, { timeoutMs: 500 });
    try {
      const cause = /^gRPC Unavailable: connect ECONNREFUSED /;
      const denied = await closed.shouldRateLimit(activation('e'));
      assert.match((denied as { cause?: string }).cause ?? '', cause);
      assert.deepEqual({ ...denied, cause: undefined }, { allowed: false, status: 500, retryAfterS: 0, headers: [], reason: 'unavailable', cause: undefined });
      const passed = await open.shouldRateLimit(activation('e'));
      assert.match((passed as { cause?: string }).cause ?? '', cause);
      assert.deepEqual({ ...passed, cause: undefined }, { allowed: true, headers: [], failedOpen: true, cause: undefined });
      assert.equal(await closed.recordUsage(activation('e', { inputTokens: 1, outputTokens: 1 })), true, 'no Tokens descriptor: nothing to send');
    } finally {
      closed.close();
      open.close();
    }
  });
});
