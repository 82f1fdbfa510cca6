import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { pino } from 'pino';
import { Registry } from 'prom-client';
import { createLogger } from '../../../../common/logger.ts';
import type { RateLimitPolicy } from '../../../../ir/policy.ts';
import { fakePolicyContext } from '../../../testing/policy-context.ts';
import { registerAiMetrics } from '../../../telemetry/ai-metrics.ts';
import { compileRateLimit } from './rate-limit.ts';
import { RateLimitUnit } from '../../../ext/gen/envoy/type/v3/ratelimit_unit_pb.js';
import { startRateLimitService } from '../../../../../test/ext/rate-limit-service.ts';
import { closedPort } from '../../../../../test/ext/servers.ts';

async function outcome(policy: string, outcome: string): Promise<number> {
  const registry = new Registry();
  registerAiMetrics(registry);
  const line = (await registry.metrics()).split('\n').find((l) => l.startsWith(`switchboard_policy_outcomes_total{policy="${policy}",outcome="${outcome}"}`));
  return line === undefined ? 0 : Number(line.slice(line.lastIndexOf(' ') + 1));
}

describe('rateLimit: switchboard_policy_outcomes_total', () => {
  it('a local limit counts each admitted request as allowed and each refused one as limited', async () => {
    const policy = { local: [{ requests: 1, unit: 'Hours' }] } as unknown as RateLimitPolicy;
    const step = compileRateLimit(policy, { logger: createLogger({ level: 'silent' }), policy: { rateLimit: policy, sources: {} } } as never);
    const before = { allowed: await outcome('localRateLimit', 'allowed'), limited: await outcome('localRateLimit', 'limited') };
    const first = await step.onRequest(fakePolicyContext());
    const second = await step.onRequest(fakePolicyContext());
    assert.equal(first.action, 'continue');
    assert.equal(second.action, 'respond');
    assert.equal(await outcome('localRateLimit', 'allowed'), before.allowed + 1);
    assert.equal(await outcome('localRateLimit', 'limited'), before.limited + 1);
  });

  const compileGlobal = (global: Record<string, unknown>, lines?: Record<string, unknown>[]) => {
    const policy = { global } as unknown as RateLimitPolicy;
    const logger = lines ? pino({ level: 'info' }, { write: (line: string) => lines.push(JSON.parse(line) as Record<string, unknown>) }) : createLogger({ level: 'silent' });
    return compileRateLimit(policy, { logger, policy: { rateLimit: policy, sources: {} } } as never);
  };

  it('a global limit counts the service\'s answers as allowed and limited', async () => {
    const rls = await startRateLimitService({ rules: () => ({ requestsPerUnit: 1, unit: RateLimitUnit.MINUTE }) });
    const step = compileGlobal({ url: rls.url, domain: 'outcomes', descriptors: [{ entries: [{ name: 'all', expression: '"x"' }] }] });
    try {
      const before = { allowed: await outcome('globalRateLimit', 'allowed'), limited: await outcome('globalRateLimit', 'limited') };
      assert.equal((await step.onRequest(fakePolicyContext())).action, 'continue');
      assert.equal((await step.onRequest(fakePolicyContext())).action, 'respond');
      assert.equal(await outcome('globalRateLimit', 'allowed'), before.allowed + 1);
      assert.equal(await outcome('globalRateLimit', 'limited'), before.limited + 1);
    } finally {
      step.close?.();
      await rls.close();
    }
  });

  it('a global limit whose service cannot be reached counts error, FailClosed and FailOpen alike', async () => {
    const url = `http://127.0.0.1:${await closedPort()}`;
    for (const failureMode of ['FailClosed', 'FailOpen']) {
      const lines: Record<string, unknown>[] = [];
      const step = compileGlobal({ url, domain: 'down', failureMode, descriptors: [{ entries: [{ name: 'all', expression: '"x"' }] }] }, lines);
      try {
        const before = { error: await outcome('globalRateLimit', 'error'), allowed: await outcome('globalRateLimit', 'allowed') };
        const result = await step.onRequest(fakePolicyContext());
        assert.equal(result.action, failureMode === 'FailOpen' ? 'continue' : 'respond', failureMode);
        assert.equal(await outcome('globalRateLimit', 'error'), before.error + 1, failureMode);
        assert.equal(await outcome('globalRateLimit', 'allowed'), before.allowed, failureMode);
        // The same 500 (or pass) for every failure: the warning says which one it was.
        await step.onRequest(fakePolicyContext());
        const warnings = lines.filter((l) => l.level === 40);
        assert.equal(warnings.length, 1, 'one warning per interval, not one per request');
        assert.equal(warnings[0]?.service, url);
        assert.equal(warnings[0]?.failureMode, failureMode);
        assert.match(String(warnings[0]?.cause), /^gRPC Unavailable: .*ECONNREFUSED/);
      } finally {
        step.close?.();
      }
    }
  });
});
