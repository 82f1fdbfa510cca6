import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { fakePolicyContext } from '../../../testing/policy-context.ts';
import { compileCors } from './cors.ts';
import { compileOrigins } from './origin.ts';
import type { PolicyResult } from '../../result.ts';
import type { TrafficPolicy } from '../../../../ir/policy.ts';

const step = (cors: Record<string, unknown>) => compileCors(cors as never, { logger: undefined as never, policy: { sources: {} } as TrafficPolicy });
const responseOf = (r: PolicyResult | Promise<PolicyResult>) => {
  assert.ok(!(r instanceof Promise));
  assert.equal(r.action, 'respond');
  return r.response;
};

describe('cors origins', () => {
  const cases = [
    { name: 'exact', patterns: ['https://app.example.com'], origin: 'https://app.example.com', ok: true },
    { name: 'exact is case-insensitive', patterns: ['https://App.Example.com'], origin: 'https://app.example.COM', ok: true },
    { name: 'other scheme', patterns: ['https://app.example.com'], origin: 'http://app.example.com', ok: false },
    { name: 'wildcard subdomain', patterns: ['https://*.example.com'], origin: 'https://a.b.example.com', ok: true },
    { name: 'wildcard needs the suffix', patterns: ['https://*.example.com'], origin: 'https://example.com', ok: false },
    { name: 'wildcard does not span a path', patterns: ['https://*.example.com'], origin: 'https://evil.com/x.example.com', ok: false },
    { name: 'wildcard port', patterns: ['http://localhost:*'], origin: 'http://localhost:3000', ok: true },
    { name: 'star allows all', patterns: ['*'], origin: 'https://anything.test', ok: true },
  ];
  for (const c of cases) it(c.name, () => assert.equal(compileOrigins(c.patterns)(c.origin), c.ok));
});

describe('cors step', () => {
  const config = { allowOrigins: ['https://*.example.com'], allowMethods: ['GET', 'POST'], allowHeaders: ['x-token'], exposeHeaders: ['x-trace'], maxAge: 600 };

  it('answers a preflight from an allowed origin', () => {
    const ctx = fakePolicyContext({ method: 'OPTIONS', headers: { origin: 'https://app.example.com', 'access-control-request-method': 'POST' } });
    const r = responseOf(step(config).onRequest(ctx));
    assert.equal(r.status, 200);
    assert.deepEqual(r.headers, {
      'access-control-allow-origin': 'https://app.example.com', 'access-control-max-age': '600', vary: 'Origin',
      'access-control-allow-methods': 'GET, POST', 'access-control-allow-headers': 'x-token',
    });
  });

  it('lets a preflight from another origin go on without CORS headers', () => {
    const ctx = fakePolicyContext({ method: 'OPTIONS', headers: { origin: 'https://evil.test', 'access-control-request-method': 'POST' } });
    assert.equal((step(config).onRequest(ctx) as PolicyResult).action, 'continue');
    assert.deepEqual(ctx.respondWith(200), {});
  });

  it('adds allow-origin, expose-headers and Vary to an actual request', () => {
    const ctx = fakePolicyContext({ headers: { origin: 'https://app.example.com' } });
    assert.equal((step(config).onRequest(ctx) as PolicyResult).action, 'continue');
    assert.deepEqual(ctx.respondWith(200, { vary: 'Accept' }), {
      vary: 'Accept, Origin', 'access-control-allow-origin': 'https://app.example.com', 'access-control-expose-headers': 'x-trace',
    });
  });

  it('answers * without credentials and echoes the origin with them', () => {
    const any = fakePolicyContext({ headers: { origin: 'https://a.test' } });
    step({ allowOrigins: ['*'] }).onRequest(any);
    assert.equal(any.respondWith(200)['access-control-allow-origin'], '*');
    const creds = fakePolicyContext({ method: 'OPTIONS', headers: { origin: 'https://a.test', 'access-control-request-method': 'PUT', 'access-control-request-headers': 'x-a' } });
    const r = responseOf(step({ allowOrigins: ['*'], allowCredentials: true, allowMethods: ['*'], allowHeaders: ['*'] }).onRequest(creds));
    assert.equal(r.headers?.['access-control-allow-origin'], 'https://a.test');
    assert.equal(r.headers?.['access-control-allow-credentials'], 'true');
    assert.equal(r.headers?.['access-control-allow-methods'], 'PUT');
    assert.equal(r.headers?.['access-control-allow-headers'], 'x-a');
  });

  it('ignores requests without Origin', () => {
    const ctx = fakePolicyContext();
    step(config).onRequest(ctx);
    assert.deepEqual(ctx.respondWith(200), {});
  });

  it('rejects a malformed config at compile time', () => assert.throws(() => step({ allowOrigins: 'x' }), /allowOrigins/));
});
