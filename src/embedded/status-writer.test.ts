import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { pino } from 'pino';
import type { ObjectStatus } from '../api/gateway/object.ts';
import { StatusWriter } from './status-writer.ts';

function capturingLogger(): { logger: pino.Logger; lines: Record<string, unknown>[] } {
  const lines: Record<string, unknown>[] = [];
  return { lines, logger: pino({ level: 'info' }, { write: (line: string) => lines.push(JSON.parse(line) as Record<string, unknown>) }) };
}

const route = (accepted: 'True' | 'False', reason: string, message = 'm'): ObjectStatus => ({
  apiVersion: 'gateway.networking.k8s.io/v1',
  kind: 'HTTPRoute',
  metadata: { name: 'r', namespace: 'default' },
  status: {
    parents: [{
      parentRef: { name: 'gw' },
      controllerName: 'switchboard.dev/gateway-controller',
      conditions: [
        { type: 'Accepted', status: accepted, reason, message },
        { type: 'ResolvedRefs', status: 'True', reason: 'ResolvedRefs', message: '' },
      ],
    }],
  },
});

type Conditions = { conditions: { type: string; lastTransitionTime?: string }[] }[];
const timesOf = (writer: StatusWriter): Record<string, string | undefined> =>
  Object.fromEntries(((writer.current()[0].status.parents as Conditions)[0].conditions).map((c) => [c.type, c.lastTransitionTime]));

describe('StatusWriter', () => {
  it('stamps new conditions, keeps the time while status and reason hold, and restamps on change', () => {
    const { logger, lines } = capturingLogger();
    let clock = new Date('2026-01-01T00:00:00Z');
    const writer = new StatusWriter(logger, () => clock);

    writer.update([route('True', 'Accepted')]);
    assert.deepEqual(timesOf(writer), { Accepted: '2026-01-01T00:00:00.000Z', ResolvedRefs: '2026-01-01T00:00:00.000Z' });
    assert.equal(lines.length, 2, 'one line per new condition');

    clock = new Date('2026-01-01T00:01:00Z');
    writer.update([route('True', 'Accepted', 'a different message')]);
    assert.deepEqual(timesOf(writer), { Accepted: '2026-01-01T00:00:00.000Z', ResolvedRefs: '2026-01-01T00:00:00.000Z' });
    assert.equal(lines.length, 2, 'a message change alone is not a transition');

    clock = new Date('2026-01-01T00:02:00Z');
    writer.update([route('False', 'NoMatchingParent')]);
    assert.deepEqual(timesOf(writer), { Accepted: '2026-01-01T00:02:00.000Z', ResolvedRefs: '2026-01-01T00:00:00.000Z' });
    assert.equal(lines.length, 3);
    assert.equal(lines[2].condition, 'Accepted');
    assert.equal(lines[2].reason, 'NoMatchingParent');
    assert.equal(lines[2].kind, 'HTTPRoute');
    assert.equal(lines[2].name, 'default/r');
    assert.equal(lines[2].level, 40, 'a False condition is a warning');
  });

  it('does not mutate the statuses it is given', () => {
    const writer = new StatusWriter(capturingLogger().logger);
    const input = route('True', 'Accepted');
    writer.update([input]);
    assert.equal(((input.status.parents as Conditions)[0].conditions[0]).lastTransitionTime, undefined);
  });

  it('forgets objects that disappeared, so they are stamped anew when they come back', () => {
    let clock = new Date('2026-01-01T00:00:00Z');
    const writer = new StatusWriter(capturingLogger().logger, () => clock);
    writer.update([route('True', 'Accepted')]);
    clock = new Date('2026-01-01T00:05:00Z');
    writer.update([]);
    writer.update([route('True', 'Accepted')]);
    assert.equal(timesOf(writer).Accepted, '2026-01-01T00:05:00.000Z');
  });

  it('a status object given again unchanged keeps its times and is not logged again, even after a clock change', () => {
    const { logger, lines } = capturingLogger();
    let clock = new Date('2026-01-01T00:00:00Z');
    const writer = new StatusWriter(logger, () => clock);
    const same = route('True', 'Accepted');
    writer.update([same]);
    const first = writer.current()[0];
    clock = new Date('2026-01-02T00:00:00Z');
    writer.update([same, { ...route('False', 'NoMatchingParent'), metadata: { name: 'other', namespace: 'default' } }]);
    assert.equal(writer.current()[0], first, 'the same written status');
    assert.deepEqual(timesOf(writer), { Accepted: '2026-01-01T00:00:00.000Z', ResolvedRefs: '2026-01-01T00:00:00.000Z' });
    assert.equal(lines.length, 4, 'only the new object\'s conditions are logged');
    // A changed object for the same route still restamps what changed.
    writer.update([route('False', 'NoMatchingParent')]);
    assert.deepEqual(timesOf(writer), { Accepted: '2026-01-02T00:00:00.000Z', ResolvedRefs: '2026-01-01T00:00:00.000Z' });
  });

  it('by position: a status moved to another place is the same written status; one displaced and gone is forgotten', () => {
    let clock = new Date('2026-01-01T00:00:00Z');
    const writer = new StatusWriter(capturingLogger().logger, () => clock);
    const named = (name: string): ObjectStatus => ({ ...route('True', 'Accepted'), metadata: { name, namespace: 'default' } });
    const [a, b, c] = [named('a'), named('b'), named('c')];
    const timeOf = (name: string): string | undefined => (writer.current().find((s) => s.metadata.name === name)?.status.parents as Conditions | undefined)?.[0].conditions[0].lastTransitionTime;
    writer.update([a, b, c]);
    const writtenB = writer.current()[1];
    clock = new Date('2026-01-01T00:01:00Z');
    // a leaves: b and c move up one place each (found by object), a is displaced and gone.
    writer.update([b, c]);
    assert.equal(writer.current()[0], writtenB, 'b moved: the same written status');
    assert.equal(timeOf('c'), '2026-01-01T00:00:00.000Z');
    clock = new Date('2026-01-01T00:02:00Z');
    // c is replaced at its place by a new status object for d; c is gone.
    writer.update([b, named('d')]);
    clock = new Date('2026-01-01T00:03:00Z');
    // a and c come back as new objects with the same conditions: forgotten, so stamped anew.
    writer.update([named('a'), b, named('c')]);
    assert.equal(timeOf('a'), '2026-01-01T00:03:00.000Z');
    assert.equal(timeOf('c'), '2026-01-01T00:03:00.000Z');
    assert.equal(timeOf('b'), '2026-01-01T00:00:00.000Z');
  });

  it('writes a copy of the conditions and of what leads to them: the input is unchanged, the rest is shared', () => {
    const writer = new StatusWriter(capturingLogger().logger, () => new Date('2026-01-01T00:00:00Z'));
    const addresses = [{ type: 'IPAddress', value: '10.0.0.1' }];
    const gateway: ObjectStatus = {
      apiVersion: 'gateway.networking.k8s.io/v1',
      kind: 'Gateway',
      metadata: { name: 'gw', namespace: 'default' },
      status: {
        addresses,
        conditions: [{ type: 'Accepted', status: 'True', reason: 'Accepted', message: '' }],
        listeners: [
          { name: 'http', attachedRoutes: 1, supportedKinds: [{ kind: 'HTTPRoute' }], conditions: [{ type: 'Programmed', status: 'True', reason: 'Programmed', message: '' }] },
          { name: 'https', attachedRoutes: 0, supportedKinds: [], conditions: [{ type: 'Programmed', status: 'False', reason: 'Invalid', message: 'no cert' }] },
        ],
      },
    };
    const before = structuredClone(gateway);
    writer.update([gateway]);
    const stamp = (condition: Record<string, unknown>) => ({ ...condition, lastTransitionTime: '2026-01-01T00:00:00.000Z' });
    const expected = structuredClone(before);
    expected.status.conditions = (expected.status.conditions as Record<string, unknown>[]).map(stamp);
    for (const listener of expected.status.listeners as { conditions: Record<string, unknown>[] }[]) listener.conditions = listener.conditions.map(stamp);
    assert.deepEqual(writer.current()[0], expected);
    assert.deepEqual(gateway, before, 'the input is not changed');
    assert.equal(writer.current()[0]?.status.addresses, addresses, 'a part without conditions is shared');
  });
});
