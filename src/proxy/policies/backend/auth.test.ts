import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { BackendAuthPolicy } from '../../../ir/policy.ts';
import { applyBackendCredentials } from './auth.ts';

describe('applyBackendCredentials', () => {
  const cases: { name: string; auth: BackendAuthPolicy; token?: string; headers?: Record<string, string>; path?: string; expect: { headers: Record<string, string>; path: string } }[] = [
    { name: 'key at the default location', auth: { key: 'k' }, expect: { headers: { authorization: 'Bearer k' }, path: '/p' } },
    { name: 'passthrough re-sends the validated client token', auth: { passthrough: {} }, token: 'client-jwt', expect: { headers: { authorization: 'Bearer client-jwt' }, path: '/p' } },
    { name: 'passthrough without a client token writes nothing', auth: { passthrough: {} }, headers: { authorization: 'Basic x' }, expect: { headers: { authorization: 'Basic x' }, path: '/p' } },
    { name: 'header with a custom prefix', auth: { key: 'k', location: { header: { name: 'X-Token', prefix: 'Token ' } } }, expect: { headers: { 'x-token': 'Token k' }, path: '/p' } },
    { name: 'query parameter replaces the client one', auth: { key: 'k v', location: { queryParameter: { name: 'key' } } }, path: '/p?key=old&a=1', expect: { headers: {}, path: '/p?key=k+v&a=1' } },
    { name: 'cookie added beside others', auth: { key: 'k', location: { cookie: { name: 's' } } }, headers: { cookie: 'a=1' }, expect: { headers: { cookie: 'a=1; s=k' }, path: '/p' } },
    { name: 'extra credentials without a primary', auth: { credentials: [{ location: { header: { name: 'x-a' } }, value: '1' }, { location: { queryParameter: { name: 'b' } }, value: '2' }] }, expect: { headers: { 'x-a': '1' }, path: '/p?b=2' } },
  ];
  for (const c of cases) {
    it(c.name, () => {
      const input = { ...c.headers };
      const out = applyBackendCredentials(input, c.path ?? '/p', c.auth, c.token ? { passthroughToken: c.token } : {});
      assert.deepEqual(out, c.expect);
      assert.deepEqual(input, { ...c.headers }, 'inputs are not changed');
    });
  }
});
