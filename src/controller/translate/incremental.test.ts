import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import type { KubeObject } from '../../api/gateway/object.ts';
import { translate } from './index.ts';
import { diffObjects, IncrementalTranslator, objectKeyOf, statusId, type ObjectDelta } from './incremental.ts';

const GW = 'gateway.networking.k8s.io/v1';
const SB = 'switchboard.dev/v1alpha1';

const gatewayClass = (controllerName = 'switchboard.dev/gateway-controller'): KubeObject => ({ apiVersion: GW, kind: 'GatewayClass', metadata: { name: 'switchboard' }, spec: { controllerName } });
const gateway = (namespace: string, listeners: { name: string; port: number }[], from = 'Same'): KubeObject => ({
  apiVersion: GW, kind: 'Gateway', metadata: { name: 'gw', namespace },
  spec: { gatewayClassName: 'switchboard', listeners: listeners.map((l) => ({ ...l, protocol: 'HTTP', allowedRoutes: { namespaces: { from, ...(from === 'Selector' ? { selector: { matchLabels: { team: 'yes' } } } : {}) } } })) },
});
const service = (namespace: string, name: string, port = 8080): KubeObject => ({ apiVersion: 'v1', kind: 'Service', metadata: { name, namespace }, spec: { ports: [{ name: 'http', port, targetPort: 9000 }] } });
const slice = (namespace: string, service: string, address = '10.0.0.1'): KubeObject => ({
  apiVersion: 'discovery.k8s.io/v1', kind: 'EndpointSlice', metadata: { name: `${service}-slice`, namespace, labels: { 'kubernetes.io/service-name': service } },
  addressType: 'IPv4', ports: [{ name: 'http', port: 9000 }], endpoints: [{ addresses: [address], conditions: { ready: true } }],
});
const route = (namespace: string, name: string, path: string, backend = 'svc', parent: Record<string, unknown> = { name: 'gw' }): KubeObject => ({
  apiVersion: GW, kind: 'HTTPRoute', metadata: { name, namespace },
  spec: { parentRefs: [parent], rules: [{ matches: [{ path: { type: 'PathPrefix', value: path } }], backendRefs: [{ name: backend, port: 8080 }] }] },
});
const keyPolicy = (namespace: string, name: string, routeName: string, secret = 'keys'): KubeObject => ({
  apiVersion: SB, kind: 'ProxyPolicy', metadata: { name, namespace },
  spec: { targetRefs: [{ group: 'gateway.networking.k8s.io', kind: 'HTTPRoute', name: routeName }], traffic: { apiKeyAuthentication: { secretRef: { name: secret } } } },
});
const gatewayPolicy = (namespace: string, header: string): KubeObject => ({
  apiVersion: SB, kind: 'ProxyPolicy', metadata: { name: 'gw-wide', namespace },
  spec: { targetRefs: [{ group: 'gateway.networking.k8s.io', kind: 'Gateway', name: 'gw' }], traffic: { transformation: { request: { set: [{ name: 'x-gw', value: `"${header}"` }] } } } },
});
/** A request timeout on a Gateway or a route: on namespace c's only route the route's beats the Gateway's, whose status then says so. */
const timeoutPolicy = (namespace: string, name: string, kind: 'Gateway' | 'HTTPRoute', target: string, timeout: string): KubeObject => ({
  apiVersion: SB, kind: 'ProxyPolicy', metadata: { name, namespace },
  spec: { targetRefs: [{ group: 'gateway.networking.k8s.io', kind, name: target }], traffic: { timeouts: { request: timeout } } },
});
/** Targets c/first then c/only, and loses to route-timeout on c/only (same level, name order): its second target's status says so. */
const twoRoutePolicy = (): KubeObject => ({
  apiVersion: SB, kind: 'ProxyPolicy', metadata: { name: 'z-two-routes', namespace: 'c' },
  spec: { targetRefs: ['first', 'only'].map((name) => ({ group: 'gateway.networking.k8s.io', kind: 'HTTPRoute', name })), traffic: { timeouts: { request: '9s' } } },
});
/** An AI ProxyBackend (a `tokens` rate limit applies only on routes to one: status/not-applied.ts). */
const aiBackend = (model = 'gpt-4o'): KubeObject => ({ apiVersion: SB, kind: 'ProxyBackend', metadata: { name: 'llm', namespace: 'a' }, spec: { ai: { provider: { providerA: { model } } } } });
const aiRoute = (name: string, path: string): KubeObject => ({
  apiVersion: GW, kind: 'HTTPRoute', metadata: { name, namespace: 'a' },
  spec: { parentRefs: [{ name: 'gw' }], rules: [{ matches: [{ path: { type: 'PathPrefix', value: path } }], backendRefs: [{ group: 'switchboard.dev', kind: 'ProxyBackend', name: 'llm' }] }] },
});
/** A route with a named rule, and a policy on that rule (a `rule/…` attachment point). */
const namedRuleRoute = (rule: string, path = '/named'): KubeObject => ({
  apiVersion: GW, kind: 'HTTPRoute', metadata: { name: 'named', namespace: 'a' },
  spec: { parentRefs: [{ name: 'gw' }], rules: [{ name: rule, matches: [{ path: { type: 'PathPrefix', value: path } }], backendRefs: [{ name: 'svc', port: 8080 }] }] },
});
const rulePolicy = (): KubeObject => ({
  apiVersion: SB, kind: 'ProxyPolicy', metadata: { name: 'on-rule', namespace: 'a' },
  spec: { targetRefs: [{ group: 'gateway.networking.k8s.io', kind: 'HTTPRoute', name: 'named', sectionName: 'main' }], traffic: { rateLimit: { local: [{ tokens: 50, unit: 'Minutes' }] } } },
});
/** A `tokens` limit: not applied while the route goes to a Service, applied once it goes to the AI backend. */
const tokensPolicy = (target = 'r1'): KubeObject => ({
  apiVersion: SB, kind: 'ProxyPolicy', metadata: { name: 'tokens', namespace: 'a' },
  spec: { targetRefs: [{ group: 'gateway.networking.k8s.io', kind: 'HTTPRoute', name: target }], traffic: { rateLimit: { local: [{ tokens: 100, unit: 'Minutes' }] } } },
});
/** A policy whose read resolves a backend (its extAuth Service): the Service joins the config on every translation. */
const extAuthPolicy = (port = 9000): KubeObject => ({
  apiVersion: SB, kind: 'ProxyPolicy', metadata: { name: 'ext-auth', namespace: 'a' },
  spec: { targetRefs: [{ group: 'gateway.networking.k8s.io', kind: 'HTTPRoute', name: 'r0' }], traffic: { extAuth: { backendRef: { name: 'authz', port }, http: {} } } },
});
/** Hashed API keys in a ConfigMap a policy selects by label: the policy's read depends on it without the Secret ledger or a backend. */
const hashedKeys = (hash = '632392fe42f33e899f54a0704039d6b497cd46066c3dd4b9900bef365b7b40a7', labels: Record<string, string> = { 'api-keys': 'true' }): KubeObject => ({
  apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'hashed', namespace: 'a', labels }, data: { carol: JSON.stringify({ keyHash: `sha256:${hash}` }) },
});
const hashedKeysPolicy = (): KubeObject => ({
  apiVersion: SB, kind: 'ProxyPolicy', metadata: { name: 'hashed-keys', namespace: 'a' },
  spec: { targetRefs: [{ group: 'gateway.networking.k8s.io', kind: 'HTTPRoute', name: 'r3' }], traffic: { apiKeyAuthentication: { configMapSelector: { matchLabels: { 'api-keys': 'true' } } } } },
});
/** A frontend (Bind-level) policy on Gateway a/gw: applyToBinds() reads it. */
const frontendPolicy = (maxHeaders: number): KubeObject => ({
  apiVersion: SB, kind: 'ProxyPolicy', metadata: { name: 'frontend', namespace: 'a' },
  spec: { targetRefs: [{ group: 'gateway.networking.k8s.io', kind: 'Gateway', name: 'gw' }], frontend: { http: { http1MaxHeaders: maxHeaders } } },
});
const older = (object: KubeObject, at = '2001-01-01T00:00:00Z'): KubeObject => ({ ...object, metadata: { ...object.metadata, creationTimestamp: at } });
const secret = (namespace: string, name: string, value: string): KubeObject => ({ apiVersion: 'v1', kind: 'Secret', metadata: { name, namespace }, stringData: { alice: value } });
const namespace = (name: string, labels: Record<string, string> = {}): KubeObject => ({ apiVersion: 'v1', kind: 'Namespace', metadata: { name, labels } });
const grant = (): KubeObject => ({
  apiVersion: 'gateway.networking.k8s.io/v1beta1', kind: 'ReferenceGrant', metadata: { name: 'from-a', namespace: 'b' },
  spec: { from: [{ group: 'gateway.networking.k8s.io', kind: 'HTTPRoute', namespace: 'a' }], to: [{ group: '', kind: 'Service' }] },
});

/** `gatewayWide` false: no policy targets a Gateway, so the not-applied reach visits only the routes policies name. */
function base(gatewayWide = true): KubeObject[] {
  const objects: KubeObject[] = [
    gatewayClass(), namespace('a'), namespace('b'),
    gateway('a', [{ name: 'http', port: 80 }]), gateway('b', [{ name: 'http', port: 81 }], 'All'),
    service('a', 'svc'), slice('a', 'svc'), service('b', 'svc'), slice('b', 'svc', '10.0.1.1'), service('b', 'shared'), slice('b', 'shared', '10.0.2.1'),
    secret('a', 'keys', 'sk-alice'), keyPolicy('a', 'p1', 'r1'), gatewayPolicy('b', 'one'), gatewayPolicy('a', 'a-wide'),
    namespace('c'), gateway('c', [{ name: 'http', port: 83 }]), service('c', 'svc'), route('c', 'only', '/c'),
    timeoutPolicy('c', 'gw-timeout', 'Gateway', 'gw', '5s'), timeoutPolicy('c', 'route-timeout', 'HTTPRoute', 'only', '7s'),
    route('c', 'first', '/c1'), twoRoutePolicy(),
    aiBackend(), tokensPolicy(), namedRuleRoute('main'), rulePolicy(), service('a', 'authz', 9000), extAuthPolicy(), hashedKeys(), hashedKeysPolicy(),
  ];
  for (let i = 0; i < 6; i++) objects.push(route('a', `r${i}`, `/a${i}`), route('b', `r${i}`, `/b${i}`));
  return gatewayWide ? objects : objects.filter((o) => !(o.kind === 'ProxyPolicy' && JSON.stringify(o.spec).includes('"kind":"Gateway"')));
}

type Edit = (objects: Map<string, KubeObject>) => void;
const put = (object: KubeObject): Edit => (objects) => void objects.set(objectKeyOf(object) as string, object);
const drop = (object: KubeObject): Edit => (objects) => void objects.delete(objectKeyOf(object) as string);

const EDITS: { name: string; edit: Edit }[] = [
  { name: 'nothing changed', edit: () => {} },
  { name: 'a route\'s path', edit: put(route('a', 'r2', '/changed')) },
  { name: 'a route added', edit: put(route('a', 'new', '/new')) },
  { name: 'a route deleted', edit: drop(route('b', 'r3', '/b3')) },
  { name: 'a route moved to the other Gateway', edit: put(route('a', 'r4', '/moved', 'svc', { name: 'gw', namespace: 'b' })) },
  { name: 'a route to another namespace\'s Service, granted', edit: (o) => { put(grant())(o); put(route('a', 'r5', '/a5', 'shared') as KubeObject)(o); (o.get(objectKeyOf(route('a', 'r5', '')) as string) as KubeObject & { spec: { rules: { backendRefs: Record<string, unknown>[] }[] } }).spec.rules[0]!.backendRefs[0]!.namespace = 'b'; } },
  { name: 'a route leaves our Gateways, shifting a policy\'s target indexes', edit: put(route('c', 'first', '/c1', 'svc', { group: '', kind: 'Service', name: 'mesh' })) },
  { name: 'a policy added', edit: put(keyPolicy('a', 'p2', 'r2')) },
  { name: 'a policy retargeted', edit: put(keyPolicy('a', 'p1', 'r3')) },
  { name: 'a policy removed', edit: drop(keyPolicy('a', 'p1', 'r1')) },
  // z-two-routes lost its timeout on c/only to route-timeout; now nothing beats it there, and only its merge outcome says so.
  { name: 'a policy at a route changes members (another policy there stops losing to it)', edit: put({ ...timeoutPolicy('c', 'route-timeout', 'HTTPRoute', 'only', '7s'), spec: { targetRefs: [{ group: 'gateway.networking.k8s.io', kind: 'HTTPRoute', name: 'only' }], traffic: { transformation: { request: { set: [{ name: 'x-only', value: '"1"' }] } } } } }) },
  { name: 'a Gateway-wide policy changed', edit: put(gatewayPolicy('b', 'two')) },
  { name: 'a Secret a policy reads', edit: put(secret('a', 'keys', 'sk-rotated')) },
  { name: 'a Secret deleted', edit: drop(secret('a', 'keys', '')) },
  { name: 'a Service port', edit: put(service('a', 'svc', 8081)) },
  { name: 'an EndpointSlice address', edit: put(slice('b', 'svc', '10.9.9.9')) },
  { name: 'a Gateway listener added', edit: put(gateway('a', [{ name: 'http', port: 80 }, { name: 'alt', port: 82 }])) },
  { name: 'a Gateway deleted', edit: drop(gateway('b', [])) },
  { name: 'Namespace labels a listener selects on', edit: (o) => { put(gateway('b', [{ name: 'http', port: 81 }], 'Selector'))(o); put(namespace('a', { team: 'yes' }))(o); } },
  // Without a Gateway-wide policy the not-applied reach visits only the routes policies name (not-applied-status.ts).
  { name: 'the Gateway-wide policies removed', edit: (o) => { drop(gatewayPolicy('a', ''))(o); drop(gatewayPolicy('b', ''))(o); drop(timeoutPolicy('c', 'gw-timeout', 'Gateway', 'gw', ''))(o); } },
  { name: 'a route with a tokens limit moves to the AI backend', edit: put(aiRoute('r1', '/a1')) },
  { name: 'a route moves back to a Service', edit: put(route('a', 'r1', '/a1')) },
  { name: 'a tokens-limit policy retargeted to the AI route', edit: (o) => { put(aiRoute('ai', '/ai'))(o); put(tokensPolicy('ai'))(o); } },
  { name: 'the AI ProxyBackend changed', edit: put(aiBackend('gpt-4.1')) },
  { name: 'the AI ProxyBackend deleted', edit: drop(aiBackend()) },
  { name: 'a targeted rule renamed', edit: put(namedRuleRoute('other')) },
  { name: 'a targeted rule\'s path', edit: put(namedRuleRoute('main', '/named2')) },
  { name: 'the Service a policy\'s extAuth names changes port', edit: put(service('a', 'authz', 9001)) },
  { name: 'a policy\'s extAuth retargeted to another port', edit: put(extAuthPolicy(9001)) },
  { name: 'a route re-created older (its age order moves)', edit: put(older(route('b', 'r5', '/b5'))) },
  { name: 'a route re-created with the path of an older one', edit: put(older(route('b', 'r4', '/b2'), '1999-01-01T00:00:00Z')) },
  { name: 'a route\'s hostnames (its attachments change, not its listeners)', edit: (o) => { const r = route('a', 'r2', '/a2') as KubeObject & { spec: Record<string, unknown> }; r.spec.hostnames = ['x.example']; put(r)(o); } },
  { name: 'a route renamed (it keeps its place in the age order)', edit: (o) => { drop(route('b', 'r3', ''))(o); put(route('b', 'r3x', '/b3'))(o); } },
  { name: 'a Gateway listener\'s port (its routes\' attachments unchanged)', edit: put(gateway('a', [{ name: 'http', port: 8080 }])) },
  { name: 'a Gateway frontend policy added', edit: put(frontendPolicy(50)) },
  { name: 'a Gateway frontend policy\'s limit changed', edit: put(frontendPolicy(10)) },
  { name: 'a ConfigMap a policy selects changes', edit: put(hashedKeys('0'.repeat(64))) },
  { name: 'a ConfigMap a policy selects loses its label', edit: put(hashedKeys(undefined, {})) },
  // Last: every route is then off our Gateways, so the edits after it in a sequence change little.
  { name: 'the GatewayClass handed to another controller', edit: put(gatewayClass('example.com/other')) },
];

/** translate()'s result without the incremental extras. */
function plain(result: ReturnType<IncrementalTranslator['apply']>): Omit<typeof result, 'changes'> {
  const { changes: _changes, ...rest } = result;
  return rest;
}

describe('IncrementalTranslator: an update equals a full translation of the same objects', () => {
  for (const { name, edit } of EDITS) for (const gatewayWide of [true, false]) {
    it(`${name}${gatewayWide ? '' : ' (no Gateway-wide policy)'}`, () => {
      const objects = new Map(base(gatewayWide).map((o) => [objectKeyOf(o) as string, o]));
      const translator = new IncrementalTranslator();
      const first = translator.replace([...objects.values()]);
      assert.deepEqual(plain(first), translate([...objects.values()]));
      assert.equal(first.changes.full, true);

      const before = new Map(objects);
      edit(objects);
      const diff = diffObjects(before, [...objects.values()]);
      assert.ok(diff);
      const next = translator.apply(diff.delta);
      const full = translate([...objects.values()]);
      assert.deepEqual(plain(next), full);
      assert.equal(next.changes.full, false);

      // Changes name exactly the entries whose content moved; every other entry is the previous object.
      for (const kind of ['routes', 'backends'] as const) {
        const was = first.config[kind] as Record<string, object>;
        const now = next.config[kind] as Record<string, object>;
        const changed = Object.keys(now).filter((k) => !Object.hasOwn(was, k) || JSON.stringify(was[k]) !== JSON.stringify(now[k])).sort();
        assert.deepEqual(Object.keys(next.changes[kind].set).sort(), changed, `${kind} set`);
        assert.deepEqual([...next.changes[kind].removed].sort(), Object.keys(was).filter((k) => !Object.hasOwn(now, k)).sort(), `${kind} removed`);
        for (const key of Object.keys(now)) if (!changed.includes(key)) assert.equal(now[key], was[key], `${kind} ${key} kept its identity`);
      }
      const statusJson = new Map(first.statuses.map((st) => [statusId(st), JSON.stringify(st)]));
      const changedStatuses = next.statuses.filter((st) => statusJson.get(statusId(st)) !== JSON.stringify(st)).map(statusId).sort();
      assert.deepEqual(Object.keys(next.changes.statuses?.set ?? {}).sort(), changedStatuses, 'statuses set');
      assert.deepEqual([...(next.changes.statuses?.removed ?? [])].sort(), [...statusJson.keys()].filter((id) => !next.statuses.some((st) => statusId(st) === id)).sort(), 'statuses removed');
      if (name === 'nothing changed') assert.equal(next.config.version, first.config.version);
    });
  }

  it('a sequence of every edit, one after another, stays equal to full translations', () => {
    const objects = new Map(base().map((o) => [objectKeyOf(o) as string, o]));
    const translator = new IncrementalTranslator();
    translator.replace([...objects.values()]);
    for (const { name, edit } of [...EDITS, ...EDITS.slice(1, 9)]) {
      const before = new Map(objects);
      edit(objects);
      const diff = diffObjects(before, [...objects.values()]);
      assert.ok(diff);
      assert.deepEqual(plain(translator.apply(diff.delta)), translate([...objects.values()]), name);
    }
  });

  it('any sequence of edits stays equal to full translations (property)', () => {
    fc.assert(fc.property(fc.boolean(), fc.array(fc.nat(EDITS.length - 1), { minLength: 1, maxLength: 12 }), (gatewayWide, picks) => {
      const objects = new Map(base(gatewayWide).map((o) => [objectKeyOf(o) as string, o]));
      const translator = new IncrementalTranslator();
      translator.replace([...objects.values()]);
      for (const pick of picks) {
        const before = new Map(objects);
        (EDITS[pick] as (typeof EDITS)[number]).edit(objects);
        const diff = diffObjects(before, [...objects.values()]);
        assert.ok(diff);
        assert.deepEqual(plain(translator.apply(diff.delta)), translate([...objects.values()]), (EDITS[pick] as (typeof EDITS)[number]).name);
      }
    }), { numRuns: 60 });
  });

  it('replace() with whole lists (an edited object in its place: diffed by position; else by key) stays equal to full translations (property)', () => {
    fc.assert(fc.property(fc.boolean(), fc.array(fc.nat(EDITS.length - 1), { minLength: 1, maxLength: 12 }), (gatewayWide, picks) => {
      const objects = new Map(base(gatewayWide).map((o) => [objectKeyOf(o) as string, o]));
      const translator = new IncrementalTranslator();
      let previous = translator.replace([...objects.values()]);
      for (const pick of picks) {
        (EDITS[pick] as (typeof EDITS)[number]).edit(objects);
        const next = translator.replace([...objects.values()]);
        assert.deepEqual(plain(next), translate([...objects.values()]), (EDITS[pick] as (typeof EDITS)[number]).name);
        // The routes it says changed are exactly those whose content moved.
        const changed = Object.keys(next.config.routes).filter((k) => JSON.stringify(previous.config.routes[k]) !== JSON.stringify(next.config.routes[k])).sort();
        assert.deepEqual(Object.keys(next.changes.routes.set).sort(), changed);
        assert.deepEqual([...next.changes.routes.removed].sort(), Object.keys(previous.config.routes).filter((k) => !Object.hasOwn(next.config.routes, k)).sort());
        // Every other route is the previous result's object (the receiver keeps its own by identity).
        for (const key of Object.keys(next.config.routes)) if (!Object.hasOwn(next.changes.routes.set, key)) assert.equal(next.config.routes[key], previous.config.routes[key], `route ${key} kept its identity`);
        previous = next;
      }
    }), { numRuns: 60 });
  });

  /**
   * The embedded config thread's status writer owns the statuses it is given (src/embedded/config-thread-worker.ts):
   * it writes lastTransitionTime into their conditions in place instead of keeping a stamped copy
   * of each. That holds only while no condition is in two places of one result (one stamp would
   * overwrite the other) and none is frozen, and while stamped statuses the memos hand out again
   * change nothing else in later results.
   */
  it('statuses stamped in place (as the config thread\'s status writer does) keep later results equal to full translations; no condition is in two places of a result (property)', () => {
    const conditionsOf = (value: unknown, out: object[]): object[] => {
      if (Array.isArray(value)) for (const item of value) conditionsOf(item, out);
      else if (value !== null && typeof value === 'object') {
        for (const [field, child] of Object.entries(value)) {
          if (field === 'conditions' && Array.isArray(child)) out.push(...(child as object[]));
          else conditionsOf(child, out);
        }
      }
      return out;
    };
    const unstamped = (value: unknown): unknown => JSON.parse(JSON.stringify(value, (key, v: unknown) => (key === 'lastTransitionTime' ? undefined : v)));
    fc.assert(fc.property(fc.boolean(), fc.array(fc.nat(EDITS.length - 1), { minLength: 1, maxLength: 12 }), (gatewayWide, picks) => {
      const objects = new Map(base(gatewayWide).map((o) => [objectKeyOf(o) as string, o]));
      const translator = new IncrementalTranslator({}, { patchRecords: true, statusChanges: false });
      let step = 0;
      const stamp = (statuses: readonly object[]): void => {
        const conditions = conditionsOf(statuses, []);
        assert.equal(new Set(conditions).size, conditions.length, 'a condition object is in two places of one result');
        for (const condition of conditions) (condition as { lastTransitionTime?: string }).lastTransitionTime = `step ${step}`;
        step++;
      };
      stamp(translator.replace([...objects.values()]).statuses);
      for (const pick of picks) {
        (EDITS[pick] as (typeof EDITS)[number]).edit(objects);
        const next = translator.replace([...objects.values()]);
        assert.deepEqual(unstamped(plain(next)), unstamped(translate([...objects.values()])), (EDITS[pick] as (typeof EDITS)[number]).name);
        stamp(next.statuses);
      }
    }), { numRuns: 60 });
  });

  it('patchRecords (the previous routes record patched in place) stays equal to full translations, with the same changes and identities (property)', () => {
    fc.assert(fc.property(fc.boolean(), fc.array(fc.nat(EDITS.length - 1), { minLength: 1, maxLength: 12 }), (gatewayWide, picks) => {
      const objects = new Map(base(gatewayWide).map((o) => [objectKeyOf(o) as string, o]));
      const translator = new IncrementalTranslator({}, { patchRecords: true });
      let previous = translator.replace([...objects.values()]);
      for (const pick of picks) {
        // The record may be the same object, changed: what it held before the call is copied out.
        const was: Record<string, object> = { ...previous.config.routes };
        (EDITS[pick] as (typeof EDITS)[number]).edit(objects);
        const next = translator.replace([...objects.values()]);
        assert.deepEqual(plain(next), translate([...objects.values()]), (EDITS[pick] as (typeof EDITS)[number]).name);
        const now = next.config.routes as Record<string, object>;
        const changed = Object.keys(now).filter((k) => JSON.stringify(was[k]) !== JSON.stringify(now[k])).sort();
        assert.deepEqual(Object.keys(next.changes.routes.set).sort(), changed);
        assert.deepEqual([...next.changes.routes.removed].sort(), Object.keys(was).filter((k) => !Object.hasOwn(now, k)).sort());
        for (const key of Object.keys(now)) if (!Object.hasOwn(next.changes.routes.set, key)) assert.equal(now[key], was[key], `route ${key} kept its identity`);
        previous = next;
      }
    }), { numRuns: 60 });
  });

  it('the first result sets every route and backend by its records themselves (no second 10k-key record)', () => {
    for (const patchRecords of [true, false]) {
      const objects = base();
      const first = new IncrementalTranslator({}, { patchRecords }).replace(objects);
      assert.equal(first.changes.routes.set, first.config.routes);
      assert.equal(first.changes.backends.set, first.config.backends);
      assert.deepEqual([first.changes.routes.removed, first.changes.backends.removed], [[], []]);
      assert.deepEqual(plain(first), translate(objects));
    }
  });

  it('statusChanges: false gives no status changes (statuses whole) on any result, and the same results otherwise', () => {
    const objects = new Map(base().map((o) => [objectKeyOf(o) as string, o]));
    const without = new IncrementalTranslator({}, { statusChanges: false });
    const withLog = new IncrementalTranslator();
    for (let step = 0; step < 3; step++) {
      const a = without.replace([...objects.values()]);
      const b = withLog.replace([...objects.values()]);
      assert.equal(a.changes.statuses, undefined);
      assert.ok(b.changes.statuses !== undefined, 'the default keeps the log');
      assert.deepEqual(plain(a), plain(b));
      put(route('a', 'r2', `/step${step}`))(objects);
    }
  });

  it('patchRecords: a route edit that keeps every key patches the previous record (the same object); without it, a new record', () => {
    for (const patchRecords of [true, false]) {
      const objects = new Map(base().map((o) => [objectKeyOf(o) as string, o]));
      const translator = new IncrementalTranslator({}, { patchRecords });
      translator.replace([...objects.values()]);
      put(route('a', 'r2', '/first'))(objects);
      const first = translator.replace([...objects.values()]);
      put(route('a', 'r2', '/second'))(objects);
      const second = translator.replace([...objects.values()]);
      assert.equal(second.config.routes === first.config.routes, patchRecords);
      assert.deepEqual(Object.keys(second.changes.routes.set), Object.keys(first.changes.routes.set));
      assert.deepEqual(second.config.routes, translate([...objects.values()]).config.routes);
    }
  });

  it('with Secret data in the translation, an edit leaves the other route statuses as the same objects and secret paths equal to a full translation', () => {
    const objects = new Map(base().map((o) => [objectKeyOf(o) as string, o]));
    const translator = new IncrementalTranslator();
    const first = translator.replace([...objects.values()]);
    assert.ok(first.secretValues.length > 0, 'the base set reads a Secret');
    const edited = route('b', 'r1', '/edited');
    const next = translator.apply({ upserted: [edited], removed: [] });
    const before = new Map(first.statuses.map((st) => [statusId(st), st]));
    // Route statuses are kept with their routes (Gateway and policy statuses are built anew and compared as JSON).
    const changed = next.statuses.filter((st) => st.kind === 'HTTPRoute' && before.get(statusId(st)) !== st).map((st) => `${st.metadata.namespace ?? ''}/${st.metadata.name}`);
    assert.deepEqual(changed, ['b/r1']);
    objects.set(objectKeyOf(edited) as string, edited);
    assert.deepEqual(next.secretPaths, translate([...objects.values()]).secretPaths);
  });

  it('a route object removed and put back after a Gateway-wide policy changed is re-applied, not replayed from before', () => {
    const objects = new Map(base().map((o) => [objectKeyOf(o) as string, o]));
    const translator = new IncrementalTranslator();
    translator.replace([...objects.values()]);
    const key = objectKeyOf(route('a', 'r2', '')) as string; // no policy names it: only the Gateway's attaches
    const kept = objects.get(key) as KubeObject;
    const steps: ObjectDelta[] = [{ upserted: [], removed: [key] }, { upserted: [gatewayPolicy('a', 'changed-while-away')], removed: [] }, { upserted: [kept], removed: [] }];
    for (const delta of steps) {
      for (const k of delta.removed) objects.delete(k);
      for (const o of delta.upserted) objects.set(objectKeyOf(o) as string, o);
      assert.deepEqual(plain(translator.apply(delta)), translate([...objects.values()]));
    }
  });

  it('a route edited while no policy existed is re-applied when the policies come back (the policy pass missed that translation)', () => {
    // No ProxyBackend either: with no policy at all the policy pass returns early (policy/index.ts).
    const world = base(false).filter((o) => o.kind !== 'ProxyBackend');
    const policies = world.filter((o) => o.kind === 'ProxyPolicy');
    const objects = new Map(world.map((o) => [objectKeyOf(o) as string, o]));
    const translator = new IncrementalTranslator();
    translator.replace([...objects.values()]);
    const steps: ObjectDelta[] = [
      { upserted: [], removed: policies.map((p) => objectKeyOf(p) as string) },
      { upserted: [route('b', 'r2', '/edited-without-policies')], removed: [] },
      { upserted: policies, removed: [] },
      { upserted: [route('a', 'r4', '/edited-after')], removed: [] },
    ];
    for (const delta of steps) {
      for (const k of delta.removed) objects.delete(k);
      for (const o of delta.upserted) objects.set(objectKeyOf(o) as string, o);
      assert.deepEqual(plain(translator.apply(delta)), translate([...objects.values()]));
    }
  });

  it('a route edit under two Gateway policies whose frontend members conflict: the rebuilt status keeps the outcome of the binds', () => {
    // gw-both loses http1MaxHeaders to the older frontend policy at the binds, and sets a traffic member every route on a/gw applies:
    // a route edit re-applies one route, so gw-both's status is rebuilt from replayed calls — routes', then the binds'.
    const both: KubeObject = { apiVersion: SB, kind: 'ProxyPolicy', metadata: { name: 'gw-both', namespace: 'a', creationTimestamp: '2030-01-01T00:00:00Z' }, spec: { targetRefs: [{ group: 'gateway.networking.k8s.io', kind: 'Gateway', name: 'gw' }], frontend: { http: { http1MaxHeaders: 10 } }, traffic: { timeouts: { request: '3s' } } } };
    const objects = new Map([...base(false), older(frontendPolicy(50)), both].map((o) => [objectKeyOf(o) as string, o]));
    const translator = new IncrementalTranslator();
    translator.replace([...objects.values()]);
    for (const [i, edited] of [route('a', 'r2', '/e1'), route('a', 'r4', '/e2'), route('a', 'r2', '/e3')].entries()) {
      objects.set(objectKeyOf(edited) as string, edited);
      const next = translator.replace([...objects.values()]);
      assert.deepEqual(plain(next), translate([...objects.values()]), `edit ${i}`);
    }
  });

  it('objects it cannot key are carried whole, and the result still equals translate()', () => {
    const objects = [...base(), { apiVersion: 'v1', kind: 'Service', metadata: {} } as KubeObject, null as unknown as KubeObject];
    assert.equal(diffObjects(new Map(), objects), undefined);
    assert.deepEqual(plain(new IncrementalTranslator().replace(objects)), translate(objects));
  });
});
