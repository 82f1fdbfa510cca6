import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { KubeObject } from '../../api/gateway/object.ts';
import { lowerModelPolicies, overlayPolicies } from './proxy-model-policies.ts';
import { indexObjects } from './snapshot.ts';
import type { Problem } from './status/conditions.ts';

const SNAPSHOT = indexObjects([
  { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'key', namespace: 'ns' }, stringData: { Authorization: 'sk-1' } } as unknown as KubeObject,
  { apiVersion: 'v1', kind: 'Service', metadata: { name: 'squid', namespace: 'ns' }, spec: { ports: [{ port: 3128 }] } } as unknown as KubeObject,
]);

const lower = (policies: unknown) => {
  const problems: Problem[] = [];
  const lowered = lowerModelPolicies(policies, 'spec.policies', 'ProxyModel/ns/m', 'ns', SNAPSHOT, problems);
  return { lowered, problems };
};

/** Each ModelPolicies member and where the proxy finds it (SPEC.md ModelPolicies; docs/models.md "Model policies"). */
const MEMBERS: { name: string; written: Record<string, unknown>; applied: (l: ReturnType<typeof lower>['lowered']) => unknown; want: unknown }[] = [
  { name: 'transformations → the provider\'s ai.transformations', written: { transformations: [{ field: 'user', expression: 'jwt.sub' }] }, applied: (l) => l.provider?.ai?.transformations, want: [{ field: 'user', expression: 'jwt.sub' }] },
  { name: 'finalTransformations → ai.finalTransformations', written: { finalTransformations: [{ field: 'store', expression: 'false' }] }, applied: (l) => l.provider?.ai?.finalTransformations, want: [{ field: 'store', expression: 'false' }] },
  { name: 'promptGuard → ai.promptGuard', written: { promptGuard: { request: [{ regex: { builtins: ['Ssn'] } }] } }, applied: (l) => l.provider?.ai?.promptGuard, want: { request: [{ regex: { builtins: ['Ssn'] } }] } },
  { name: 'auth → the provider\'s backend auth (the Secret read)', written: { auth: { secretRef: { name: 'key' } } }, applied: (l) => l.provider?.auth?.key, want: 'sk-1' },
  { name: 'health → backend health', written: { health: { eviction: { consecutiveFailures: 2 } } }, applied: (l) => l.provider?.health, want: { eviction: { consecutiveFailures: 2 } } },
  { name: 'tls → backend tls', written: { tls: { insecureSkipVerify: 'All' } }, applied: (l) => l.provider?.tls?.insecureSkipVerify, want: 'All' },
  { name: 'tunnel → backend tunnel (the Service resolved)', written: { tunnel: { backendRef: { name: 'squid', port: 3128 } } }, applied: (l) => l.provider?.tunnel, want: { backendKey: 'service/ns/squid:3128' } },
  {
    name: 'headers → a backend transformation with literal values',
    written: { headers: { request: { set: [{ name: 'x-a', value: 'say "hi"' }], add: [{ name: 'x-b', value: 'b' }], remove: ['x-c'] }, response: { set: [{ name: 'x-d', value: 'd' }] } } },
    applied: (l) => l.provider?.transformation,
    want: { request: { set: [{ name: 'x-a', value: '"say \\"hi\\""' }], add: [{ name: 'x-b', value: '"b"' }], remove: ['x-c'] }, response: { set: [{ name: 'x-d', value: '"d"' }] } },
  },
  {
    name: 'authorization → the model route\'s rule (not a provider member)',
    written: { authorization: { policy: { matchExpressions: ['has(jwt.sub)'] }, action: 'Require' } },
    applied: (l) => [l.authorization, l.provider],
    want: [{ rules: [{ matchExpressions: ['has(jwt.sub)'], action: 'Require', source: 'ProxyModel/ns/m' }] }, undefined],
  },
];

describe('lowerModelPolicies: member × where it is applied', () => {
  for (const row of MEMBERS) {
    it(row.name, () => {
      const { lowered, problems } = lower(row.written);
      assert.deepEqual(problems, []);
      assert.deepEqual(row.applied(lowered), row.want);
      if (lowered.provider) assert.ok(Object.values(lowered.provider.sources).every((s) => s?.[0] === 'ProxyModel/ns/m'), 'every member names the model as its source');
    });
  }

  const REFUSALS: { name: string; written: Record<string, unknown>; message: RegExp }[] = [
    { name: 'a missing Secret', written: { auth: { secretRef: { name: 'nope' } } }, message: /spec\.policies\.auth\.secretRef: Secret ns\/nope not found/ },
    { name: 'an authorization expression that is not CEL', written: { authorization: { policy: { matchExpressions: ['jwt.sub =='] } } }, message: /spec\.policies\.authorization\.policy\.matchExpressions\[0\]: invalid CEL/ },
    { name: 'a transformation that is not CEL', written: { transformations: [{ field: 'user', expression: 'jwt.' }] }, message: /spec\.policies\.transformations\[0\]\.expression/ },
  ];
  for (const row of REFUSALS) {
    it(`refused, nothing lowered: ${row.name}`, () => {
      const { lowered, problems } = lower(row.written);
      assert.deepEqual(lowered, {});
      assert.equal(problems.length, 1, JSON.stringify(problems));
      assert.equal(problems[0].reason, 'Invalid');
      assert.match(problems[0].message, row.message);
    });
  }

  it('a virtual model\'s members win over its target\'s, ai field by field', () => {
    const target = lower({ tls: { insecureSkipVerify: 'All' }, transformations: [{ field: 'a', expression: '1' }], headers: { request: { set: [{ name: 'x', value: 't' }] } } }).lowered.provider;
    const virtual = lower({ promptGuard: { request: [{ regex: { builtins: ['Email'] } }] }, headers: { request: { set: [{ name: 'x', value: 'v' }] } } }).lowered.provider;
    const merged = overlayPolicies(target, virtual);
    assert.equal(merged?.tls?.insecureSkipVerify, 'All');
    assert.deepEqual(merged?.ai?.transformations, [{ field: 'a', expression: '1' }]);
    assert.ok(merged?.ai?.promptGuard);
    assert.deepEqual(merged?.transformation?.request?.set, [{ name: 'x', value: '"v"' }]);
  });
});
