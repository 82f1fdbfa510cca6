import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Registry } from 'prom-client';
import { createLogger } from '../../../../common/logger.ts';
import type { RateLimitPolicy } from '../../../../ir/policy.ts';
import { fakePolicyContext } from '../../../testing/policy-context.ts';
import { registerAiMetrics } from '../../../telemetry/ai-metrics.ts';
import { compileRateLimit } from './rate-limit.ts';

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
});
