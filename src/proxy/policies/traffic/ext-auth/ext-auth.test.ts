import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { pino } from 'pino';
import { Registry } from 'prom-client';
import type { ExtAuthPolicy } from '../../../../ir/policy.ts';
import { fakePolicyContext } from '../../../testing/policy-context.ts';
import { registerAiMetrics } from '../../../telemetry/ai-metrics.ts';
import { compileExtAuth } from './ext-auth.ts';
import { closedPort, startHttpServer } from '../../../../../test/ext/servers.ts';

async function outcome(value: string): Promise<number> {
  const registry = new Registry();
  registerAiMetrics(registry);
  const line = (await registry.metrics()).split('\n').find((l) => l.startsWith(`switchboard_policy_outcomes_total{policy="extAuth",outcome="${value}"}`));
  return line === undefined ? 0 : Number(line.slice(line.lastIndexOf(' ') + 1));
}

function compile(policy: Record<string, unknown>, lines: Record<string, unknown>[]) {
  const logger = pino({ level: 'info' }, { write: (line: string) => lines.push(JSON.parse(line) as Record<string, unknown>) });
  const extAuth = policy as unknown as ExtAuthPolicy;
  return compileExtAuth(extAuth, { logger, policy: { extAuth, sources: {} } } as never);
}

describe('extAuth: why a service could not decide, and switchboard_policy_outcomes_total', () => {
  it('counts allowed and denied from the service\'s answers', async () => {
    const service = await startHttpServer((req, _body, res) => res.writeHead(req.headers.authorization === 'Bearer good' ? 200 : 401).end());
    const step = compile({ url: service.url, http: {} }, []);
    try {
      const before = { allowed: await outcome('allowed'), denied: await outcome('denied') };
      assert.equal((await step.onRequest(fakePolicyContext({ headers: { authorization: 'Bearer good' } }))).action, 'continue');
      assert.equal((await step.onRequest(fakePolicyContext())).action, 'respond');
      assert.equal(await outcome('allowed'), before.allowed + 1);
      assert.equal(await outcome('denied'), before.denied + 1);
    } finally {
      step.close?.();
      await service.close();
    }
  });

  for (const failureMode of ['FailClosed', 'FailOpen'] as const) {
    it(`an unreachable service (${failureMode}) counts error and logs the cause once per interval, with how many failures the line stands for`, async () => {
      const url = `http://127.0.0.1:${await closedPort()}`;
      const lines: Record<string, unknown>[] = [];
      const step = compile({ url, http: {}, failureMode }, lines);
      try {
        const before = await outcome('error');
        for (let i = 0; i < 3; i++) {
          const result = await step.onRequest(fakePolicyContext());
          assert.equal(result.action, failureMode === 'FailOpen' ? 'continue' : 'respond');
        }
        assert.equal(await outcome('error'), before + 3);
        const warnings = lines.filter((l) => l.level === 40);
        assert.equal(warnings.length, 1, JSON.stringify(lines));
        assert.equal(warnings[0]?.service, url);
        assert.equal(warnings[0]?.failureMode, failureMode);
        assert.equal(warnings[0]?.failures, 1);
        assert.match(String(warnings[0]?.cause), /^ECONNREFUSED: /);
        assert.match(String(warnings[0]?.msg), failureMode === 'FailOpen' ? /let through/ : /denied/);
      } finally {
        step.close?.();
      }
    });
  }
});
