import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Condition, ObjectStatus } from '../../api/gateway/object.ts';
import { MAX_ERROR_CHARS, ProxyFeedback } from './proxy-feedback.ts';

const gw = { namespace: 'apps', name: 'gw' };
const gatewayStatus = (programmed: 'True' | 'False'): ObjectStatus => ({
  apiVersion: 'gateway.networking.k8s.io/v1', kind: 'Gateway', metadata: { name: 'gw', namespace: 'apps' },
  status: { conditions: [{ type: 'Accepted', status: 'True', reason: 'Accepted', message: '' }, { type: 'Programmed', status: programmed, reason: programmed === 'True' ? 'Programmed' : 'Invalid', message: 'translated', observedGeneration: 3 }] },
});
const programmedOf = (statuses: readonly ObjectStatus[]): Condition => (statuses[0]!.status.conditions as Condition[]).find((c) => c.type === 'Programmed')!;

describe('ProxyFeedback', () => {
  const rows: { name: string; act: (f: ProxyFeedback) => void; translated: 'True' | 'False'; expect: Partial<Condition> }[] = [
    { name: 'no proxy yet: Pending', act: () => {}, translated: 'True', expect: { status: 'False', reason: 'Pending', observedGeneration: 3 } },
    { name: 'a proxy acknowledged: the translator\'s condition stands', act: (f) => f.ack(gw, 'p1'), translated: 'True', expect: { status: 'True', reason: 'Programmed' } },
    { name: 'a proxy refused: Invalid with its error', act: (f) => { f.ack(gw, 'p1'); f.nack(gw, 'p1', 'bind 8080: EADDRINUSE'); }, translated: 'True', expect: { status: 'False', reason: 'Invalid', message: 'proxy p1 refused the config and serves its last good one: bind 8080: EADDRINUSE' } },
    { name: 'refused, then acknowledged again', act: (f) => { f.nack(gw, 'p1', 'x'); f.ack(gw, 'p1'); }, translated: 'True', expect: { status: 'True' } },
    { name: 'the refusing proxy went away, another serves', act: (f) => { f.ack(gw, 'p2'); f.nack(gw, 'p1', 'x'); f.disconnect(gw, 'p1'); }, translated: 'True', expect: { status: 'True' } },
    { name: 'a translator False is never overridden', act: (f) => f.ack(gw, 'p1'), translated: 'False', expect: { status: 'False', reason: 'Invalid', message: 'translated' } },
  ];
  for (const row of rows) {
    it(row.name, () => {
      const feedback = new ProxyFeedback(() => {});
      row.act(feedback);
      const got = programmedOf(feedback.overlay([gatewayStatus(row.translated)]));
      for (const [key, value] of Object.entries(row.expect)) assert.equal(got[key as keyof Condition], value, key);
    });
  }

  it('bounds the quoted error and tells when a Gateway may have changed', () => {
    let changes = 0;
    const feedback = new ProxyFeedback(() => changes++);
    feedback.nack(gw, 'p1', 'e'.repeat(10_000));
    feedback.nack(gw, 'p1', 'e'.repeat(10_000));
    assert.equal(changes, 1, 'the same refusal twice is one change');
    const message = programmedOf(feedback.overlay([gatewayStatus('True')])).message;
    assert.ok(message.length < MAX_ERROR_CHARS + 100);
  });

  it('keeps identities across updates: the same array without a change, the same overlaid object for the same condition', () => {
    const feedback = new ProxyFeedback(() => {});
    const route: ObjectStatus = { apiVersion: 'gateway.networking.k8s.io/v1', kind: 'HTTPRoute', metadata: { name: 'r', namespace: 'apps' }, status: { parents: [] } };
    const translated = [gatewayStatus('True'), route];
    const first = feedback.overlay(translated);
    assert.notEqual(first[0], translated[0], 'no proxy yet: Pending replaces the translator\'s condition');
    assert.equal(first[1], route);
    assert.equal(feedback.overlay(translated)[0], first[0], 'the status writers skip an unchanged status by identity');
    feedback.ack(gw, 'p1');
    assert.equal(feedback.overlay(translated), translated, 'nothing to replace: the translated statuses as they are');
    feedback.nack(gw, 'p1', 'x');
    assert.equal(programmedOf(feedback.overlay(translated)).reason, 'Invalid', 'a different condition is a new object');
  });
});
