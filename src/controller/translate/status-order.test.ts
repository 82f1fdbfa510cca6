import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import type { ObjectStatus } from '../../api/gateway/object.ts';
import { byObject } from './object-delta.ts';
import { StatusOrder } from './status-order.ts';

const status = (kind: string, namespace: string, name: string, n: number): ObjectStatus => ({ apiVersion: 'v1', kind, metadata: { namespace, name }, status: { n } } as unknown as ObjectStatus);
const entry = fc.tuple(fc.constantFrom('HTTPRoute', 'Gateway', 'ProxyPolicy'), fc.constantFrom('a', 'b', ''), fc.integer({ min: 0, max: 40 }).map((n) => `o${n}`));

describe('StatusOrder', () => {
  it('after any sequence of lists equals a stable sort by byObject (property)', () => {
    // Steps replace statuses in place (same object: the kept order is patched), or give a new list (sorted anew); duplicates included.
    const step = fc.oneof(fc.record({ replace: fc.array(fc.nat(), { maxLength: 5 }) }), fc.record({ list: fc.array(entry, { maxLength: 60 }) }));
    fc.assert(fc.property(fc.array(entry, { maxLength: 60 }), fc.array(step, { maxLength: 10 }), (initial, steps) => {
      const order = new StatusOrder();
      let list = initial.map(([k, ns, name], i) => status(k, ns, name, i));
      let round = 0;
      assert.deepEqual(order.sort(list), [...list].sort(byObject));
      for (const s of steps) {
        round++;
        if ('list' in s) list = s.list.map(([k, ns, name], i) => status(k, ns, name, i));
        else {
          list = [...list];
          for (const at of s.replace) if (list.length > 0) {
            const i = at % list.length;
            const was = list[i] as ObjectStatus;
            list[i] = status(was.kind, was.metadata.namespace ?? '', was.metadata.name, 1000 * round + i);
          }
        }
        const sorted = order.sort(list);
        assert.deepEqual(sorted, [...list].sort(byObject));
        // The same objects, not copies: the status writers compare identity.
        [...list].sort(byObject).forEach((st, i) => assert.equal(sorted[i], st));
      }
    }), { numRuns: 100 });
  });
});
