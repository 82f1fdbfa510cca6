/**
 * The conversion matrix: every request fixture × every provider → the exact upstream request
 * (or the gateway's own answer). `UPDATE_FIXTURES=1` rewrites the expectations; review the diff.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { deterministicContext } from './context.ts';
import type { RouteType } from './config.ts';
import { planRequest, type RequestPlan } from './plan.ts';
import { bodyValue, loadFixtures, loadProviders, saveFixture, UPDATE } from './testing/fixtures.ts';

interface RequestFixture {
  route: RouteType;
  method?: string;
  body: unknown;
  expect?: Record<string, unknown>;
}

function summarise(plan: RequestPlan): unknown {
  if (plan.kind === 'respond') return { respond: { status: plan.response.status, body: bodyValue(plan.response.body) } };
  const u = plan.upstream;
  return { upstream: { host: u.host, port: u.port, tls: u.tls, method: u.method, path: u.path, headers: u.headers, credential: u.credential, body: bodyValue(u.body) } };
}

const providers = loadProviders();

describe('request matrix', () => {
  for (const fx of loadFixtures<RequestFixture>('requests')) {
    describe(fx.name, () => {
      const results: Record<string, unknown> = {};
      for (const [name, provider] of Object.entries(providers)) {
        const plan = planRequest({
          routeType: fx.data.route,
          provider,
          body: fx.data.body === null ? new Uint8Array(0) : Buffer.from(JSON.stringify(fx.data.body)),
          method: fx.data.method,
          modelAliases: { fast: 'gpt-4o-mini' },
          context: deterministicContext(),
        });
        results[name] = summarise(plan);
        it(name, () => {
          if (UPDATE) return;
          assert.ok(fx.data.expect?.[name] !== undefined, `no expectation for ${name}; run with UPDATE_FIXTURES=1`);
          assert.deepEqual(results[name], fx.data.expect[name]);
        });
      }
      if (UPDATE) saveFixture(fx.path, { ...fx.data, expect: results });
    });
  }
});
