import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import type { Backend, Route } from '../../../ir/types.ts';
import type { ListenerRef } from './apply.ts';
import { reachedKinds } from './not-applied-status.ts';
import { point } from './targets.ts';

/**
 * reachedKinds() given the wanted points visits only the routes route/rule points name when no
 * Gateway or listener point is wanted (issue 15); whatever it visits, the answer for every wanted
 * point must be the full walk's.
 */
const BACKENDS: ReadonlyMap<string, Backend> = new Map([
  ['service/a/svc:80', { key: 'service/a/svc:80', kind: 'Service' } as unknown as Backend],
  ['backend/a/llm', { key: 'backend/a/llm', kind: 'ProxyBackend', ai: {} } as unknown as Backend],
  ['backend/a/tools', { key: 'backend/a/tools', kind: 'ProxyBackend', mcp: {} } as unknown as Backend],
]);
const BACKEND_KEYS = [...BACKENDS.keys(), 'service/a/missing:80'];
const LISTENERS: readonly ListenerRef[] = [
  { key: 'a/gw/http', gateway: { namespace: 'a', name: 'gw' } },
  { key: 'a/gw/alt', gateway: { namespace: 'a', name: 'gw' } },
  { key: 'b/gw/http', gateway: { namespace: 'b', name: 'gw' } },
];
// Rule names with a slash too: a rule point is split at every `/` to find its route.
const RULE_NAMES = [undefined, 'main', 'x/y', 'gw'];
// Route keys that are prefixes of each other's rule points (`rule/a/r/x/y` vs route `a/r/x`).
const ROUTE_KEYS = ['a/r', 'a/r/x', 'b/r', 'a/gw'];

const world = fc.record({
  routes: fc.uniqueArray(fc.constantFrom(...ROUTE_KEYS), { minLength: 1 }).chain((keys) => fc.tuple(...keys.map((key) => fc.record({
    key: fc.constant(key),
    rules: fc.array(fc.record({ name: fc.constantFrom(...RULE_NAMES), backends: fc.array(fc.constantFrom(...BACKEND_KEYS, null), { maxLength: 2 }) }), { minLength: 1, maxLength: 3 }),
    listeners: fc.subarray([...LISTENERS]),
  })))),
});

function pointsOf(routes: readonly { key: string; rules: readonly { name: string | undefined }[] }[]): string[] {
  const keys = new Set<string>(['service/a/svc:80', 'backend/a/llm']);
  for (const l of LISTENERS) keys.add(point.listener(l.key)).add(point.gateway(l.gateway));
  for (const r of routes) {
    keys.add(point.route(r.key));
    for (const rule of r.rules) if (rule.name !== undefined) keys.add(point.rule(r.key, rule.name));
  }
  keys.add(point.route('a/none')).add(point.rule('a/none', 'main'));
  return [...keys];
}

describe('reachedKinds: the wanted points get the full walk\'s kinds', () => {
  it('any routes, any wanted points (property)', () => {
    fc.assert(fc.property(world, fc.infiniteStream(fc.boolean()), ({ routes }, picks) => {
      const record = new Map<string, Route>();
      const listeners = new Map<string, readonly ListenerRef[]>();
      for (const r of routes) {
        record.set(r.key, { key: r.key, namespace: 'a', name: r.key, creationTimestamp: '', rules: r.rules.map((rule, i) => ({ key: `${r.key}/${i}`, ...(rule.name !== undefined ? { name: rule.name } : {}), backends: rule.backends.map((backendKey) => ({ backendKey, weight: 1 })) })) } as unknown as Route);
        listeners.set(r.key, r.listeners);
      }
      const all = reachedKinds(record, listeners, BACKENDS);
      const candidates = pointsOf(routes);
      const iterator = picks[Symbol.iterator]();
      const wanted = new Set(candidates.filter(() => iterator.next().value === true));
      const some = reachedKinds(record, listeners, BACKENDS, wanted);
      for (const key of wanted) assert.deepEqual([...(some.get(key) ?? [])].sort(), [...(all.get(key) ?? [])].sort(), key);
    }), { numRuns: 300 });
  });

  it('a rule point alone finds its route', () => {
    const route = { key: 'a/r', namespace: 'a', name: 'r', creationTimestamp: '', rules: [{ key: 'a/r/0', name: 'main', backends: [{ backendKey: 'backend/a/llm', weight: 1 }] }] } as unknown as Route;
    const reach = reachedKinds(new Map([['a/r', route]]), new Map([['a/r', [LISTENERS[0] as ListenerRef]]]), BACKENDS, new Set([point.rule('a/r', 'main')]));
    assert.deepEqual([...(reach.get(point.rule('a/r', 'main')) ?? [])], ['ai']);
  });
});
