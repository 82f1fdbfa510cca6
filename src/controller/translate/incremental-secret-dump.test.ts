import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { KubeObject } from '../../api/gateway/object.ts';
import { redactedJson } from '../../embedded/admin-server.ts';
import { translate } from './index.ts';
import { IncrementalTranslator, objectKeyOf, type IncrementalResult } from './incremental.ts';

/**
 * /config_dump after incremental edits (issue 15 follow-up). JSON parsed from a Secret (API-key
 * metadata) is recorded in the Secret ledger as a tree, found in the IR by identity. Each fresh
 * read parses a new tree: a policy whose read resolves a backend (extAuth) on every translation,
 * any policy after an edit of itself or of a non-route object (the memos are cleared). Route
 * results kept from earlier translations (ApplyMemo; the incremental translator swapping a re-made
 * route for its equal previous object) must not hold an older tree this translation's ledger does
 * not name. The metadata carries a number, a boolean and a key name: none is a recorded string,
 * so only the tree's identity redacts them. Before the ledger interned trees by content, every row
 * with a backend-resolving policy and the rows that re-read a kept policy failed.
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
/**
 * API keys from the Secret, with an extAuth Service (`extAuth`: its read resolves a backend, so it
 * is read again on every translation) or without (its read is kept, with what it recorded).
 */
const policy = (extAuth: boolean, { port = 9000, timeout, annotated = false }: { port?: number; timeout?: string; annotated?: boolean } = {}): KubeObject => ({
  apiVersion: SB, kind: 'ProxyPolicy', metadata: { name: 'keys', namespace: 'a', ...(annotated ? { annotations: { note: 'same content' } } : {}) },
  spec: {
    targetRefs: [{ group: 'gateway.networking.k8s.io', kind: 'HTTPRoute', name: 'r0' }],
    traffic: {
      apiKeyAuthentication: { secretRef: { name: 'keys' } },
      ...(extAuth ? { extAuth: { backendRef: { name: 'authz', port }, http: {} } } : {}),
      ...(timeout ? { timeouts: { request: timeout } } : {}),
    },
  },
});
const service = (name: string, port: number): KubeObject => ({ apiVersion: 'v1', kind: 'Service', metadata: { name, namespace: 'a' }, spec: { ports: [{ name: 'http', port, targetPort: port }] } });

function world(extAuth: boolean): KubeObject[] {
  return [
    { apiVersion: GW, kind: 'GatewayClass', metadata: { name: 'switchboard' }, spec: { controllerName: 'switchboard.dev/gateway-controller' } },
    { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'a' } },
    { apiVersion: GW, kind: 'Gateway', metadata: { name: 'gw', namespace: 'a' }, spec: { gatewayClassName: 'switchboard', listeners: [{ name: 'http', port: 80, protocol: 'HTTP' }] } },
    service('svc', 8080), service('authz', 9000), keysSecret('sk-alice-0123456789', 987654321), policy(extAuth),
    route('r0', '/a0'), route('r1', '/a1'), route('r2', '/a2'),
  ];
}

function assertRedacted(result: Pick<IncrementalResult, 'config' | 'secretPaths'>, step: string): void {
  const dump = redactedJson(result.config, result.secretPaths);
  for (const mark of SECRET_MARKS) assert.ok(!dump.includes(mark), `${step}: /config_dump shows ${mark}`);
}

type Step = { readonly name: string; readonly edit: (extAuth: boolean) => KubeObject[] };

const UNRELATED_ROUTE: Step = { name: 'an unrelated route edited', edit: () => [route('r1', '/edited')] };
const EDITS: readonly Step[] = [
  UNRELATED_ROUTE,
  { name: 'an unrelated route added', edit: () => [route('r9', '/new')] },
  { name: 'nothing changed', edit: () => [] },
  // A new policy object that lowers to the same content: the route it reaches is re-made equal and swapped for the kept one.
  { name: 'the policy re-annotated (same content)', edit: (extAuth) => [policy(extAuth, { annotated: true })] },
  { name: 'the policy edited (another member)', edit: (extAuth) => [policy(extAuth, { timeout: '5s' })] },
  // The same metadata with its keys in another order: equal under the IR's digests, so the route holding the old tree is kept.
  { name: 'the Secret rewritten with its JSON keys reordered', edit: () => [keysSecret('sk-alice-0123456789', 987654321, true)] },
  { name: 'the Secret edited', edit: () => [keysSecret('sk-rotated-9876543210', 123123123)] },
  // Any object but a route or a policy clears the memos: every policy is read again, every route re-made.
  { name: 'the extAuth Service edited (its target port)', edit: () => [{ ...service('authz', 9000), spec: { ports: [{ name: 'http', port: 9000, targetPort: 9100 }] } }] },
  { name: 'the policy\'s extAuth and its Service move to another port', edit: (extAuth) => [policy(extAuth, { port: 9001 }), service('authz', 9001)] },
  { name: 'the targeted route edited', edit: () => [route('r0', '/a0-edited')] },
];

/** Applies `steps` one by one, checking the dump and the equivalence with translate() after each. */
function run(extAuth: boolean, steps: readonly Step[]): void {
  const objects = new Map(world(extAuth).map((o) => [objectKeyOf(o) as string, o]));
  const translator = new IncrementalTranslator();
  assertRedacted(translator.replace([...objects.values()]), 'first');
  for (const step of steps) {
    const upserted = step.edit(extAuth);
    for (const o of upserted) objects.set(objectKeyOf(o) as string, o);
    const next = translator.apply({ upserted, removed: [] });
    assertRedacted(next, step.name);
    const full = translate([...objects.values()]);
    assert.ok(/"quota":(987654321|123123123)/.test(JSON.stringify(full.config)), `${step.name}: the metadata is still in the IR (else the step shows nothing)`);
    assert.deepEqual(next.secretPaths, full.secretPaths, `${step.name}: secret paths`);
    assert.deepEqual(next.config, full.config, `${step.name}: config`);
  }
}

for (const extAuth of [true, false]) {
  const kind = extAuth ? 'a policy whose read resolves a backend (read again every time)' : 'a policy whose read is kept';
  describe(`IncrementalTranslator: /config_dump redacts Secret-parsed JSON that ${kind} puts on kept routes`, () => {
    it('the world puts the metadata tree into the config, and a full translation redacts it', () => {
      const full = translate(world(extAuth));
      assert.ok(JSON.stringify(full.config).includes('987654321'), 'the metadata reaches the IR (else this test shows nothing)');
      assertRedacted(full, 'full translation');
    });

    for (const step of EDITS) {
      it(`after ${step.name}, then an unrelated route edit: no Secret-derived value in the dump; secret paths and config equal translate()'s`, () => {
        run(extAuth, [step, UNRELATED_ROUTE]);
      });
    }

    it('every edit, one after another, then an unrelated route edit', () => {
      run(extAuth, [...EDITS, UNRELATED_ROUTE]);
    });
  });
}
