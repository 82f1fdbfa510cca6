/**
 * Recorded-shape provider answers → what each kind of client receives. Streams are fed in
 * 1-byte, 7-byte and whole chunks; every split must give the same bytes as the fixture.
 * `UPDATE_FIXTURES=1` rewrites the expectations.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { deterministicContext } from './context.ts';
import { planRequest, type ForwardPlan } from './plan.ts';
import { CLIENT_ROUTES, clientRequest, type ClientRoute } from './testing/client-requests.ts';
import { bodyValue, feed, loadFixtures, loadProviders, saveFixture, UPDATE, upstreamStreamBytes, type UpstreamFixture } from './testing/fixtures.ts';

const providers = loadProviders();

function forwardPlan(providerName: string, route: ClientRoute, stream: boolean): ForwardPlan {
  const plan = planRequest({
    routeType: route,
    provider: providers[providerName],
    body: Buffer.from(JSON.stringify(clientRequest(route, stream))),
    context: deterministicContext(),
  });
  assert.equal(plan.kind, 'forward');
  return plan;
}

describe('response translation', () => {
  for (const fx of loadFixtures<UpstreamFixture>('responses')) {
    describe(fx.name, () => {
      const results: Record<string, unknown> = {};
      for (const route of fx.data.routes ?? CLIENT_ROUTES) {
        const plan = forwardPlan(fx.data.provider, route, false);
        const up = fx.data.upstream;
        const res = plan.translateResponse(up.status ?? 200, up.headers ?? {}, Buffer.from(JSON.stringify(up.body)));
        results[route] = { status: res.status, body: bodyValue(res.body), ...(res.usage ? { usage: res.usage } : {}) };
        it(route, () => {
          if (!UPDATE) assert.deepEqual(results[route], fx.data.expect?.[route]);
        });
      }
      if (UPDATE) saveFixture(fx.path, { ...fx.data, expect: results });
    });
  }
});

describe('stream translation', () => {
  for (const fx of loadFixtures<UpstreamFixture>('streams')) {
    describe(fx.name, () => {
      const input = upstreamStreamBytes(fx.data.upstream);
      const results: Record<string, unknown> = {};
      for (const route of fx.data.routes ?? CLIENT_ROUTES) {
        const run = (size: number) => {
          const t = forwardPlan(fx.data.provider, route, true).createStreamTranslator();
          const sse = feed((c) => t.push(c), () => t.end(), input, size);
          return { sse, failed: t.failed, ...(t.usage() ? { usage: t.usage() } : {}) };
        };
        const whole = run(0);
        results[route] = whole;
        it(`${route}: 1-byte and 7-byte chunks equal the whole stream`, () => {
          assert.deepEqual(run(1), whole);
          assert.deepEqual(run(7), whole);
        });
        it(`${route}: matches the fixture`, () => {
          if (!UPDATE) assert.deepEqual(whole, fx.data.expect?.[route]);
        });
      }
      if (UPDATE) saveFixture(fx.path, { ...fx.data, expect: results });
    });
  }
});
