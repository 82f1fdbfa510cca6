import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { ObjectStatus } from '../../api/gateway/object.ts';
import { byObject, statusId } from './object-delta.ts';
import { StatusLog } from './status-log.ts';

const status = (name: string, state: string, namespace = 'default'): ObjectStatus => ({ apiVersion: 'gateway.networking.k8s.io/v1', kind: 'HTTPRoute', metadata: { name, namespace }, status: { state } });
const sorted = (list: ObjectStatus[]): ObjectStatus[] => list.sort(byObject);

/** The list a receiver holds after `changes` (undefined: it takes `next` whole), as applyStatusUpdate builds it. */
function received(held: readonly ObjectStatus[], changes: ReturnType<StatusLog['next']>, next: readonly ObjectStatus[]): ObjectStatus[] {
  if (changes === undefined) return [...next];
  const byId = new Map(held.map((s) => [statusId(s), s]));
  for (const id of changes.removed) byId.delete(id);
  for (const [id, s] of Object.entries(changes.set)) byId.set(id, s);
  return sorted([...byId.values()]);
}

describe('StatusLog', () => {
  it('the first result sets every status by its id; an edit after it is described in place', () => {
    const log = new StatusLog();
    const first = sorted([status('a', 'x'), status('b', 'x'), status('c', 'x')]);
    assert.deepEqual(log.next(first), { set: Object.fromEntries(first.map((s) => [statusId(s), s])), removed: [] });
    const second = [first[0] as ObjectStatus, status('b', 'y'), first[2] as ObjectStatus];
    assert.deepEqual(log.next(second), { set: { [statusId(second[1] as ObjectStatus)]: second[1] }, removed: [] });
  });

  const rows: { name: string; first: () => ObjectStatus[]; second: (first: ObjectStatus[]) => ObjectStatus[]; secondWhole?: boolean }[] = [
    {
      name: 'two statuses for one object in the first result: the next is compared with nothing',
      first: () => sorted([status('a', 'x'), status('a', 'y'), status('b', 'x')]),
      // The same ids at the same places, one changed: described in place it would name one id for two statuses.
      second: (first) => [first[0] as ObjectStatus, status('a', 'z'), first[2] as ObjectStatus],
    },
    {
      name: 'distinct objects whose ids collide (a field holds the separator): taken whole',
      first: () => sorted([status('b\u0000c', 'x', 'a'), status('c', 'x', 'a\u0000b')]),
      second: (first) => [status('b\u0000c', 'y', 'a'), first[1] as ObjectStatus],
      secondWhole: true,
    },
    {
      name: 'a first result not in byObject order: compared by id, then in place',
      first: () => [status('b', 'x'), status('a', 'x')],
      second: (first) => [status('b', 'y'), first[1] as ObjectStatus],
    },
    {
      name: 'an added status after the first result',
      first: () => sorted([status('a', 'x'), status('c', 'x')]),
      second: (first) => sorted([...first, status('b', 'x')]),
    },
    {
      name: 'a removed status after the first result',
      first: () => sorted([status('a', 'x'), status('b', 'x'), status('c', 'x')]),
      second: (first) => [first[0] as ObjectStatus, first[2] as ObjectStatus],
    },
  ];
  for (const row of rows) {
    it(row.name, () => {
      const log = new StatusLog();
      const first = row.first();
      const held = received([], log.next(first), first);
      const second = row.second(first);
      const changes = log.next(second);
      if (row.secondWhole) assert.equal(changes, undefined, 'no change set can be keyed by those ids');
      assert.deepEqual(received(held, changes, second), sorted([...second]));
    });
  }
});
