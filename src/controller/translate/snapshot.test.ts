import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import type { KubeObject } from '../../api/gateway/object.ts';
import { IndexCache, indexObjects, RouteOrderCache, sortedByAge } from './snapshot.ts';

const TIMES = ['', '2001-01-01T00:00:00Z', '2020-01-01T00:00:00Z'];
const route = (name: string, namespace: string, created: string): KubeObject => ({
  apiVersion: 'gateway.networking.k8s.io/v1', kind: 'HTTPRoute', metadata: { name, namespace, ...(created ? { creationTimestamp: created } : {}) },
});

type Step =
  | { readonly op: 'replace'; readonly at: number; readonly created: string | undefined }
  | { readonly op: 'remove'; readonly at: number }
  | { readonly op: 'add'; readonly created: string };

const step: fc.Arbitrary<Step> = fc.oneof(
  fc.record({ op: fc.constant('replace' as const), at: fc.nat(), created: fc.option(fc.constantFrom(...TIMES), { nil: undefined }) }),
  fc.record({ op: fc.constant('remove' as const), at: fc.nat() }),
  fc.record({ op: fc.constant('add' as const), created: fc.constantFrom(...TIMES) }),
);

describe('RouteOrderCache: the kept age order is always sortedByAge()\'s', () => {
  it('any sequence of replacements (same or another creation time), removals and additions (property)', () => {
    fc.assert(fc.property(fc.array(step, { maxLength: 30 }), (steps) => {
      let next = 0;
      // One object per namespace/name, as the IncrementalTranslator's keyed objects are.
      let input: KubeObject[] = Array.from({ length: 8 }, (_, i) => route(`r${next++}`, i % 2 === 0 ? 'a' : 'b', TIMES[i % TIMES.length] as string));
      const cache = new RouteOrderCache();
      assert.deepEqual(cache.sortedByAge(input), sortedByAge(input));
      for (const s of steps) {
        input = [...input];
        if (s.op === 'add') input.push(route(`r${next++}`, 'a', s.created));
        else if (input.length > 0) {
          const at = s.at % input.length;
          const was = input[at] as KubeObject;
          if (s.op === 'remove') input.splice(at, 1);
          // A replacement keeps the name and position; undefined keeps the creation time too (an edit).
          else input[at] = route(was.metadata.name, was.metadata.namespace as string, s.created ?? (was.metadata.creationTimestamp as string | undefined) ?? '');
        }
        const kept = cache.sortedByAge(input);
        assert.deepEqual(kept, sortedByAge(input));
        kept.reverse(); // a caller changing its copy does not change the kept order
      }
    }), { numRuns: 200 });
  });
});

describe('IndexCache: a snapshot indexed with the kept lists equals one indexed afresh', () => {
  const KINDS = [['v1', 'Service'], ['v1', 'Secret'], ['gateway.networking.k8s.io/v1', 'HTTPRoute'], ['switchboard.dev/v1alpha1', 'ProxyPolicy'], ['discovery.k8s.io/v1', 'EndpointSlice']] as const;
  const object = (kind: number, name: string, created: string): KubeObject => {
    const [apiVersion, k] = KINDS[kind % KINDS.length] as (typeof KINDS)[number];
    return { apiVersion, kind: k, metadata: { name, namespace: 'a', labels: { 'kubernetes.io/service-name': name }, ...(created ? { creationTimestamp: created } : {}) } };
  };
  // Edits in place (same kind: the lists are patched), a kind changed at a position, removals and additions (indexed afresh).
  const edit = fc.oneof(
    fc.record({ op: fc.constant('edit' as const), at: fc.nat(), created: fc.constantFrom(...TIMES) }),
    fc.record({ op: fc.constant('kind' as const), at: fc.nat(), kind: fc.nat() }),
    fc.record({ op: fc.constant('remove' as const), at: fc.nat() }),
    fc.record({ op: fc.constant('add' as const), kind: fc.nat() }),
  );
  const fields = (s: ReturnType<typeof indexObjects>): unknown => ({
    httpRoutes: s.httpRoutes, proxyPolicies: s.proxyPolicies, services: [...s.services], secrets: [...s.secrets], endpointSlices: [...s.endpointSlices], configMapList: s.configMapList,
  });
  it('any sequence of edits (property)', () => {
    fc.assert(fc.property(fc.array(edit, { maxLength: 25 }), (edits) => {
      let next = 0;
      let input: KubeObject[] = Array.from({ length: 12 }, (_, i) => object(i, `o${next++}`, TIMES[i % TIMES.length] as string));
      const cache = new IndexCache();
      const order = new RouteOrderCache();
      for (const e of [undefined, ...edits]) {
        if (e) {
          input = [...input];
          const at = 'at' in e && input.length > 0 ? e.at % input.length : 0;
          const was = input[at];
          if (e.op === 'add') input.push(object(e.kind, `o${next++}`, ''));
          else if (was && e.op === 'remove') input.splice(at, 1);
          else if (was && e.op === 'edit') input[at] = { ...was, metadata: { ...was.metadata, creationTimestamp: e.created } };
          else if (was && e.op === 'kind') input[at] = object(e.kind, was.metadata.name, '');
        }
        const kept = indexObjects(input, { cache, routeOrder: order });
        // The same objects (identity), in the same order, as indexing from nothing.
        const fresh = fields(indexObjects(input));
        assert.deepEqual(fields(kept), fresh);
        const ids = (list: readonly KubeObject[]): KubeObject[] => [...list];
        assert.ok(ids(kept.httpRoutes).every((o, i) => o === (fresh as { httpRoutes: KubeObject[] }).httpRoutes[i]));
      }
    }), { numRuns: 150 });
  });
});
