/**
 * The rate-limit service double answers the Envoy RLS semantics the global rate-limit tests rely
 * on, asked over gRPC by a plain connect client (not the gateway's), with a clock the test moves.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { create } from '@bufbuild/protobuf';
import { createClient, type Client } from '@connectrpc/connect';
import { createGrpcTransport } from '@connectrpc/connect-node';
import {
  RateLimitRequestSchema, RateLimitResponse_Code, RateLimitResponse_RateLimit_Unit, RateLimitService, type RateLimitResponse,
} from '../../src/proxy/ext/gen/envoy/service/ratelimit/v3/rls_pb.js';
import { RateLimitUnit } from '../../src/proxy/ext/gen/envoy/type/v3/ratelimit_unit_pb.js';
import { startRateLimitService, type RunningRateLimitService } from './rate-limit-service.ts';

type Descriptor = { entries: [string, string][]; limit?: { requestsPerUnit: number; unit: RateLimitUnit } };

describe('in-process rate-limit service (Envoy RLS over gRPC, in memory)', () => {
  let now = 1_000_000;
  let rls: RunningRateLimitService;
  let client: Client<typeof RateLimitService>;

  before(async () => {
    // user: 2 a minute; anything else has no rule.
    rls = await startRateLimitService({
      rules: (_domain, entries) => (entries[0]?.key === 'user' ? { requestsPerUnit: 2, unit: RateLimitUnit.MINUTE } : undefined),
      now: () => now,
    });
    client = createClient(RateLimitService, createGrpcTransport({ baseUrl: rls.url }));
  });
  after(async () => {
    await rls?.close();
  });

  const ask = (domain: string, descriptors: Descriptor[], hitsAddend = 0): Promise<RateLimitResponse> =>
    client.shouldRateLimit(create(RateLimitRequestSchema, {
      domain, hitsAddend,
      descriptors: descriptors.map((d) => ({ entries: d.entries.map(([key, value]) => ({ key, value })), ...(d.limit ? { limit: d.limit } : {}) })),
    }));
  const codes = (r: RateLimitResponse) => [r.overallCode, ...r.statuses.map((s) => s.code)];
  const { OK, OVER_LIMIT } = RateLimitResponse_Code;

  it('counts per descriptor in a fixed window that opens at the first hit and lasts one unit', async () => {
    const alice: Descriptor[] = [{ entries: [['user', 'alice']] }];
    const first = await ask('win', alice);
    assert.deepEqual(codes(first), [OK, OK]);
    assert.deepEqual(first.statuses[0].currentLimit?.unit, RateLimitResponse_RateLimit_Unit.MINUTE);
    assert.equal(first.statuses[0].currentLimit?.requestsPerUnit, 2);
    assert.equal(first.statuses[0].limitRemaining, 1);
    assert.equal(first.statuses[0].durationUntilReset?.seconds, 60n);
    now += 20_500;
    const second = await ask('win', alice);
    assert.equal(second.statuses[0].limitRemaining, 0);
    assert.equal(second.statuses[0].durationUntilReset?.seconds, 39n);
    assert.equal(second.statuses[0].durationUntilReset?.nanos, 500_000_000);
    assert.deepEqual(codes(await ask('win', alice)), [OVER_LIMIT, OVER_LIMIT]);
    assert.equal(rls.count('win', [['user', 'alice']]), 3, 'over-limit hits still count');
    now += 39_500;
    assert.equal(rls.count('win', [['user', 'alice']]), 0, 'the window closed one minute after its first hit');
    assert.deepEqual(codes(await ask('win', alice)), [OK, OK]);
  });

  it('keeps domains, values and entry order apart', async () => {
    await ask('a', [{ entries: [['user', 'bob'], ['team', 'x']] }], 2);
    assert.equal(rls.count('a', [['user', 'bob'], ['team', 'x']]), 2);
    assert.equal(rls.count('b', [['user', 'bob'], ['team', 'x']]), 0);
    assert.equal(rls.count('a', [['user', 'bob']]), 0);
    assert.equal(rls.count('a', [['team', 'x'], ['user', 'bob']]), 0);
  });

  it('charges hits_addend to every descriptor (0 counts as 1); overall OVER_LIMIT when any descriptor is', async () => {
    const r = await ask('hits', [{ entries: [['user', 'carol']] }, { entries: [['user', 'dan']], limit: { requestsPerUnit: 5, unit: RateLimitUnit.HOUR } }], 3);
    assert.deepEqual(codes(r), [OVER_LIMIT, OVER_LIMIT, OK]);
    assert.equal(r.statuses[1].currentLimit?.unit, RateLimitResponse_RateLimit_Unit.HOUR, 'the descriptor limit overrides the rule');
    assert.equal(r.statuses[1].limitRemaining, 2);
    assert.equal(r.statuses[1].durationUntilReset?.seconds, 3600n);
    await ask('hits', [{ entries: [['user', 'erin']] }]);
    assert.equal(rls.count('hits', [['user', 'erin']]), 1);
  });

  it('answers OK without a limit and counts nothing for a descriptor that has no rule', async () => {
    const r = await ask('norule', [{ entries: [['path', '/x']] }], 1000);
    assert.deepEqual(codes(r), [OK, OK]);
    assert.equal(r.statuses[0].currentLimit, undefined);
    assert.equal(rls.count('norule', [['path', '/x']]), 0);
  });

  it('rejects a limit with no unit as an invalid argument', async () => {
    await assert.rejects(ask('bad', [{ entries: [['user', 'x']], limit: { requestsPerUnit: 1, unit: RateLimitUnit.UNKNOWN } }]), /invalid_argument/i);
  });

  it('records every request it received', () => {
    assert.deepEqual(rls.requests.map((r) => r.domain), ['win', 'win', 'win', 'win', 'a', 'hits', 'hits', 'norule', 'bad']);
  });
});
