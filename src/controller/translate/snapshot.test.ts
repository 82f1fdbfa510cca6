import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import type { KubeObject } from '../../api/gateway/object.ts';
import { RouteOrderCache, sortedByAge } from './snapshot.ts';

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
