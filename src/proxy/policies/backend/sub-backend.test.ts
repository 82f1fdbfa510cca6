import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { BackendPolicy } from '../../../ir/policy.ts';
import { subBackendPolicy } from './sub-backend.ts';

const own: BackendPolicy = { http: { requestTimeoutMs: 1 }, sources: {} };
const targeted: BackendPolicy = { tcp: { connectTimeoutMs: 3000 }, sources: {} };
const routeWith: BackendPolicy = { http: { requestTimeoutMs: 30_000 }, sources: {}, subBackends: { primary: targeted } };
const routeWithout: BackendPolicy = { http: { requestTimeoutMs: 30_000 }, sources: {} };

describe('subBackendPolicy', () => {
  const rows: Array<{ name: string; route: BackendPolicy | undefined; sub: string; expect: BackendPolicy | undefined }> = [
    { name: 'the translator wrote the sub-backend: its entry, whole', route: routeWith, sub: 'primary', expect: targeted },
    { name: 'nothing targets it: the route policy without subBackends', route: routeWith, sub: 'other', expect: { http: { requestTimeoutMs: 30_000 }, sources: {} } },
    { name: 'route policy without subBackends: itself', route: routeWithout, sub: 'other', expect: routeWithout },
    { name: 'no route policy: the sub-backend\'s own policies', route: undefined, sub: 'primary', expect: own },
  ];
  for (const row of rows) {
    it(row.name, () => assert.deepEqual(subBackendPolicy(row.route, row.sub, own), row.expect));
  }
  it('the stripped route policy is one object per route policy (compiled-policy caches key on identity)', () => {
    assert.equal(subBackendPolicy(routeWith, 'x', undefined), subBackendPolicy(routeWith, 'y', undefined));
    assert.equal(subBackendPolicy(routeWithout, 'x', undefined), routeWithout);
  });
});
