import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { TrafficPolicy } from '../../../../ir/policy.ts';
import { fakePolicyContext } from '../../../testing/policy-context.ts';
import type { PolicyResult } from '../../result.ts';
import { compileCsrf } from './csrf.ts';

describe('csrf', () => {
  const step = compileCsrf({ additionalOrigins: ['https://trusted.example.com'] }, { logger: undefined as never, policy: { sources: {} } as TrafficPolicy });
  const cases = [
    { name: 'GET passes whatever it carries', method: 'GET', headers: { 'sec-fetch-site': 'cross-site', origin: 'https://evil.test' }, status: undefined },
    { name: 'OPTIONS passes', method: 'OPTIONS', headers: { 'sec-fetch-site': 'cross-site' }, status: undefined },
    { name: 'no Sec-Fetch-Site and no Origin passes', method: 'POST', headers: {}, status: undefined },
    { name: 'same-origin passes', method: 'POST', headers: { 'sec-fetch-site': 'same-origin', origin: 'https://evil.test' }, status: undefined },
    { name: 'none (user-initiated) passes', method: 'POST', headers: { 'sec-fetch-site': 'none' }, status: undefined },
    { name: 'cross-site is rejected', method: 'POST', headers: { 'sec-fetch-site': 'cross-site', origin: 'https://evil.test' }, status: 403 },
    { name: 'same-site is rejected', method: 'DELETE', headers: { 'sec-fetch-site': 'same-site', origin: 'https://sub.gateway.test' }, status: 403 },
    { name: 'cross-site from an additional origin passes', method: 'POST', headers: { 'sec-fetch-site': 'cross-site', origin: 'https://trusted.example.com' }, status: undefined },
    { name: 'old browser: Origin matching Host passes', method: 'POST', headers: { origin: 'http://gateway.test:8080' }, host: 'gateway.test:8080', status: undefined },
    { name: 'old browser: Origin with another port is rejected', method: 'POST', headers: { origin: 'http://gateway.test:9090' }, host: 'gateway.test:8080', status: 403 },
    { name: 'old browser: another Origin is rejected', method: 'PUT', headers: { origin: 'https://evil.test' }, status: 403 },
    { name: 'old browser: an additional origin passes', method: 'PATCH', headers: { origin: 'https://trusted.example.com' }, status: undefined },
    { name: 'old browser: Origin null is rejected', method: 'POST', headers: { origin: 'null' }, status: 403 },
  ];
  for (const c of cases) {
    it(c.name, () => {
      const r = step.onRequest(fakePolicyContext({ method: c.method, headers: c.headers, host: c.host })) as PolicyResult;
      assert.equal(r.action === 'respond' ? r.response.status : undefined, c.status);
    });
  }
});
