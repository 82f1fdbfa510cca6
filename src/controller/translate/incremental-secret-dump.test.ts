import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { KubeObject } from '../../api/gateway/object.ts';
import { redactedJson } from '../../embedded/admin-server.ts';
import { translate } from './index.ts';
import { IncrementalTranslator, objectKeyOf, type IncrementalResult } from './incremental.ts';

/**
 * /config_dump after incremental edits (issue 15 follow-up). A policy whose read resolves a
 * backend (extAuth) is read again on every translation, so JSON it parses from a Secret (API-key
 * metadata) is a new tree each time, recorded by identity in the Secret ledger; route results kept
 * from earlier translations must not hold an older tree the ledger no longer names. The metadata
 * carries a number, a boolean and a key name: none of them is a recorded string, so only the
 * tree's identity redacts them.
 */
const GW = 'gateway.networking.k8s.io/v1';
const SB = 'switchboard.dev/v1alpha1';

const SECRET_MARKS = ['sk-alice-0123456789', 'tierSecretKeyName', '987654321', 'gold-plan-xyz', 'sk-rotated-9876543210', '123123123'];

const keysSecret = (key: string, quota: number, reordered = false): KubeObject => ({
  apiVersion: 'v1', kind: 'Secret', metadata: { name: 'keys', namespace: 'a', ...(reordered ? { labels: { rewritten: 'yes' } } : {}) },
  stringData: { alice: JSON.stringify({ key, metadata: reordered ? { vip: true, nested: [quota, { deep: quota }], quota, tierSecretKeyName: 'gold-plan-xyz' } : { tierSecretKeyName: 'gold-plan-xyz', quota, vip: true, nested: [quota, { deep: quota }] } }) },
});
const route = (name: string, path: string): KubeObject => ({
  apiVersion: GW, kind: 'HTTPRoute', metadata: { name, namespace: 'a' },
  spec: { parentRefs: [{ name: 'gw' }], rules: [{ matches: [{ path: { type: 'PathPrefix', value: path } }], backendRefs: [{ name: 'svc', port: 8080 }] }] },
});
/** API keys from the Secret and an extAuth Service in one policy: its read resolves a backend, so it is never kept. */
const policy = (port = 9000, timeout?: string, annotated = false): KubeObject => ({
  apiVersion: SB, kind: 'ProxyPolicy', metadata: { name: 'keys-and-authz', namespace: 'a', ...(annotated ? { annotations: { note: 'same content' } } : {}) },
  spec: {
    targetRefs: [{ group: 'gateway.networking.k8s.io', kind: 'HTTPRoute', name: 'r0' }],
    traffic: { apiKeyAuthentication: { secretRef: { name: 'keys' } }, extAuth: { backendRef: { name: 'authz', port }, http: {} }, ...(timeout ? { timeouts: { request: timeout } } : {}) },
  },
});
const service = (name: string, port: number): KubeObject => ({ apiVersion: 'v1', kind: 'Service', metadata: { name, namespace: 'a' }, spec: { ports: [{ name: 'http', port, targetPort: port }] } });

function world(): KubeObject[] {
  return [
    { apiVersion: GW, kind: 'GatewayClass', metadata: { name: 'switchboard' }, spec: { controllerName: 'switchboard.dev/gateway-controller' } },
    { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'a' } },
    { apiVersion: GW, kind: 'Gateway', metadata: { name: 'gw', namespace: 'a' }, spec: { gatewayClassName: 'switchboard', listeners: [{ name: 'http', port: 80, protocol: 'HTTP' }] } },
    service('svc', 8080), service('authz', 9000), keysSecret('sk-alice-0123456789', 987654321), policy(),
    route('r0', '/a0'), route('r1', '/a1'), route('r2', '/a2'),
  ];
}

function assertRedacted(result: Pick<IncrementalResult, 'config' | 'secretPaths'>, step: string): void {
  const dump = redactedJson(result.config, result.secretPaths);
  for (const mark of SECRET_MARKS) assert.ok(!dump.includes(mark), `${step}: /config_dump shows ${mark}`);
}

const EDITS: { name: string; edit: (objects: Map<string, KubeObject>) => KubeObject[] }[] = [
  { name: 'an unrelated route edited', edit: () => [route('r1', '/edited')] },
  { name: 'an unrelated route added', edit: () => [route('r9', '/new')] },
  { name: 'nothing changed', edit: () => [] },
  // A new policy object that lowers to the same content: the routes it reaches are kept (or re-made equal and swapped for the kept ones).
  { name: 'the policy re-annotated (same content)', edit: () => [policy(9000, undefined, true)] },
  { name: 'the policy edited (another member)', edit: () => [policy(9000, '5s')] },
  // The same metadata with its keys in another order: equal to the IR's digests, so a route holding the old tree may be kept.
  { name: 'the Secret rewritten with its JSON keys reordered', edit: () => [keysSecret('sk-alice-0123456789', 987654321, true)] },
  { name: 'the Secret edited', edit: () => [keysSecret('sk-rotated-9876543210', 123123123)] },
  { name: 'the policy\'s extAuth and its Service move to another port', edit: () => [policy(9001), service('authz', 9001)] },
  { name: 'the extAuth Service edited (its target port)', edit: () => [{ ...service('authz', 9001), spec: { ports: [{ name: 'http', port: 9001, targetPort: 9100 }] } }] },
  { name: 'the targeted route edited', edit: () => [route('r0', '/a0-edited')] },
];

describe('IncrementalTranslator: /config_dump redacts Secret-parsed JSON a backend-resolving policy puts on kept routes', () => {
  it('the world puts the metadata tree into the config, and a full translation redacts it', () => {
    const full = translate(world());
    assert.ok(JSON.stringify(full.config).includes('987654321'), 'the metadata reaches the IR (else this test shows nothing)');
    assertRedacted(full, 'full translation');
  });

  for (const { name } of EDITS) {
    it(`after ${name}: no Secret-derived value in the dump, and the secret paths equal a full translation's`, () => {
      const objects = new Map(world().map((o) => [objectKeyOf(o) as string, o]));
      const translator = new IncrementalTranslator();
      assertRedacted(translator.replace([...objects.values()]), 'first');
      // Every edit up to and including this one, in order, then the unrelated route edit again.
      const upTo = EDITS.findIndex((e) => e.name === name);
      for (const step of [...EDITS.slice(0, upTo + 1), EDITS[0] as (typeof EDITS)[number]]) {
        const upserted = step.edit(objects);
        for (const o of upserted) objects.set(objectKeyOf(o) as string, o);
        const next = translator.apply({ upserted, removed: [] });
        assertRedacted(next, step.name);
        const full = translate([...objects.values()]);
        assert.ok(/"quota":(987654321|123123123)/.test(JSON.stringify(full.config)), `${step.name}: the metadata is still in the IR (else the step shows nothing)`);
        assert.deepEqual(next.secretPaths, full.secretPaths, `${step.name}: secret paths`);
        assert.deepEqual(next.config, full.config, `${step.name}: config`);
      }
    });
  }
});
