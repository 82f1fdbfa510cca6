import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { patchConfig } from '../../ir/config-delta.ts';
import type { Backend, Bind, Listener, ProxyConfig, Route } from '../../ir/types.ts';
import { nextSlice } from './slice-patch.ts';
import { secretValuesOf, sliceForGateways, versionsOf, type GatewayRef, type ProxySlice, type SecretValues } from './split.ts';
import { SystemVersionScheme } from './version.ts';

const GATEWAYS = ['g0', 'g1', 'g2'];
const ROUTES = 24;
const BACKENDS = 4;

const listener = (gw: string, routes: readonly string[]): Listener => ({
  key: `ns/${gw}/http`, gateway: { namespace: 'ns', name: gw }, sectionName: 'http', hostname: null, protocol: 'HTTP',
  routes: routes.map((routeKey) => ({ routeKey, hostnames: [] })),
});
const backend = (n: number, tag: number, names?: string): Backend => ({
  key: `backend/ns/b${n}`, kind: 'ProxyBackend', namespace: 'ns', name: `b${n}`, endpoints: [{ host: `10.0.0.${tag}`, port: 80 }], rewriteHost: false,
  // A backend naming another (an AI provider's policy): the patch falls back to a whole cut.
  ...(names ? { ai: { key: `backend/ns/b${n}`, groups: [{ providers: [{ name: 'p', policies: { extAuth: { backendKey: names } } }] }] } as never } : {}),
});
const route = (n: number, backendN: number, tag: number, secret?: string): Route => ({
  key: `ns/r${n}`, namespace: 'ns', name: `r${n}`, creationTimestamp: '2026-01-01T00:00:00Z',
  rules: [{
    key: `ns/r${n}/rule/0`, matches: [], filters: [], backends: [{ backendKey: `backend/ns/b${backendN}`, weight: 1, filters: [] }], timeouts: { requestMs: tag },
    // Per-listener policies, one of them for a listener of another gateway: pruned per slice.
    trafficByListener: { 'ns/g0/http': { timeouts: {} } as never, 'ns/g1/http': { apiKeyAuthentication: { keys: [{ id: 'k', keyHash: secret ?? 'none' }] } } as never },
  }],
});

describe('nextSlice: a patched slice equals the slice cut whole, through a random sequence of changes', () => {
  for (const seed of [1, 2, 3, 4, 5]) {
    it(`seed ${seed}`, () => {
      let state = seed;
      const random = (n: number): number => ((state = (state * 1103515245 + 12345) % 2 ** 31) % n);
      // Which routes each gateway's listener attaches; bind i holds gateway i's listener (g2's bind also g0's second listener … kept simple: one each, plus a shared bind).
      const attached: string[][] = GATEWAYS.map(() => []);
      for (let n = 0; n < ROUTES; n++) if (random(4) > 0) attached[random(GATEWAYS.length)]?.push(`ns/r${n}`);
      const bindsOf = (): Bind[] => [
        { key: 'bind/80', port: 80, protocol: 'HTTP', listeners: [listener('g0', attached[0] ?? []), listener('g1', attached[1] ?? [])] },
        { key: 'bind/81', port: 81, protocol: 'HTTP', listeners: [listener('g2', attached[2] ?? [])] },
      ];
      const routes: Record<string, Route> = {};
      for (let n = 0; n < ROUTES; n++) if (random(5) > 0) routes[`ns/r${n}`] = route(n, random(BACKENDS + 2), 0, random(2) ? 'secret-a' : undefined);
      const backends: Record<string, Backend> = {};
      for (let n = 0; n < BACKENDS; n++) backends[`backend/ns/b${n}`] = backend(n, 0);
      let config: ProxyConfig = { version: 'v0', binds: bindsOf(), routes, backends };
      let secrets: SecretValues = secretValuesOf(['secret-a', '10.0.0.3']);
      const sets: GatewayRef[][] = [[{ namespace: 'ns', name: 'g0' }], [{ namespace: 'ns', name: 'g2' }], [{ namespace: 'ns', name: 'g0' }, { namespace: 'ns', name: 'g1' }]];
      let slices: (ProxySlice | undefined)[] = sets.map(() => undefined);
      for (let step = 1; step <= 120; step++) {
        const routesSet: Record<string, Route> = {};
        const routesRemoved: string[] = [];
        const backendsSet: Record<string, Backend> = {};
        const backendsRemoved: string[] = [];
        let binds = config.binds;
        const what = random(10);
        const n = random(ROUTES);
        if (what <= 2) routesSet[`ns/r${n}`] = route(n, random(BACKENDS + 2), step, random(2) ? 'secret-a' : undefined);
        else if (what === 3) routesRemoved.push(`ns/r${n}`);
        else if (what === 4 || what === 5) {
          // Attach or detach a route (a missing one too): the bind changes.
          const list = attached[random(GATEWAYS.length)] as string[];
          const at = list.indexOf(`ns/r${n}`);
          if (at >= 0) list.splice(at, 1);
          else list.push(`ns/r${n}`);
          binds = bindsOf();
        } else if (what === 6) backendsSet[`backend/ns/b${random(BACKENDS + 2)}`] = backend(random(BACKENDS + 2), step % 5);
        else if (what === 7) backendsRemoved.push(`backend/ns/b${random(BACKENDS + 2)}`);
        else if (what === 8) {
          const k = random(BACKENDS);
          backendsSet[`backend/ns/b${k}`] = backend(k, step % 5, `backend/ns/b${(k + 1) % BACKENDS}`);
        } else if (what === 9) secrets = secretValuesOf(random(2) ? ['secret-a'] : ['secret-a', '10.0.0.3'], secrets);
        // Keys in backendsSet name the object they carry.
        const fixedBackends = Object.fromEntries(Object.values(backendsSet).map((b) => [b.key, b]));
        config = random(15) === 0
          ? { version: `v${step}`, binds: bindsOf(), routes: { ...config.routes, ...routesSet }, backends: { ...config.backends, ...fixedBackends } } // not patched: no delta
          : patchConfig(config, `v${step}`, [...binds], { set: routesSet, removed: routesRemoved }, { set: fixedBackends, removed: backendsRemoved });
        slices = sets.map((gateways, i) => {
          const slice = nextSlice(slices[i], config, gateways, secrets);
          const whole = sliceForGateways(config, gateways, secrets);
          const where = `step ${step}, set ${i}`;
          assert.deepEqual(versionsOf(slice.resources), versionsOf(whole.resources), where);
          assert.deepEqual([...slice.resources.values()].map((r) => r.json).sort(), [...whole.resources.values()].map((r) => r.json).sort(), where);
          assert.equal(slice.version, whole.version, where);
          assert.equal(slice.versionIn(SystemVersionScheme.SORTED), whole.versionIn(SystemVersionScheme.SORTED), where);
          assert.deepEqual(slice.redactions, whole.redactions, where);
          return slice;
        });
      }
    });
  }
});

describe('nextSlice: changes it does not patch are cut whole', () => {
  const g0 = [{ namespace: 'ns', name: 'g0' }];
  const base = (routes: Record<string, Route>, backends: Record<string, Backend>): ProxyConfig => ({
    version: 'v0', binds: [{ key: 'bind/80', port: 80, protocol: 'HTTP', listeners: [listener('g0', ['ns/r0'])] }], routes, backends,
  });
  const same = (slice: ProxySlice, config: ProxyConfig, secrets?: SecretValues): void => {
    const whole = sliceForGateways(config, g0, secrets);
    assert.deepEqual(versionsOf(slice.resources), versionsOf(whole.resources));
    assert.equal(slice.version, whole.version);
    assert.deepEqual(slice.redactions, whole.redactions);
  };

  it('backends that name each other (a cycle) leave the slice when nothing else names them', () => {
    const cycle = { 'backend/ns/b0': backend(0, 1, 'backend/ns/b1'), 'backend/ns/b1': backend(1, 1, 'backend/ns/b0'), 'backend/ns/b2': backend(2, 1) };
    const first = base({ 'ns/r0': route(0, 0, 0) }, cycle);
    const slice = nextSlice(undefined, first, g0);
    assert.ok(slice.resources.has('backend\u0000backend/ns/b1'));
    const next = patchConfig(first, 'v1', [...first.binds], { set: { 'ns/r0': route(0, 2, 1) }, removed: [] }, { set: {}, removed: [] });
    const after = nextSlice(slice, next, g0);
    assert.ok(!after.resources.has('backend\u0000backend/ns/b0') && !after.resources.has('backend\u0000backend/ns/b1'));
    same(after, next);
  });

  it('another list of secret values: the redactions follow the new list', () => {
    const first = base({ 'ns/r0': route(0, 0, 0) }, { 'backend/ns/b0': backend(0, 3) });
    const before = secretValuesOf(['10.0.0.3']);
    const slice = nextSlice(undefined, first, g0, before);
    assert.deepEqual(slice.redactions, ['10.0.0.3']);
    const next = patchConfig(first, 'v1', [...first.binds], { set: { 'ns/r0': route(0, 0, 1) }, removed: [] }, { set: {}, removed: [] });
    const after = nextSlice(slice, next, g0, secretValuesOf(['secret-a'], before));
    assert.deepEqual(after.redactions, []);
    same(after, next, secretValuesOf(['secret-a']));
  });
});
