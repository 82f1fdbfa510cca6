import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { handlingOf, mostSpecificPattern } from './methods.ts';
import { decodeServerRequestId, encodeServerRequestId } from './rewrite.ts';

describe('method patterns', () => {
  const patterns = ['*', 'tools/*', '*/list', 'tools/list', 'resources/templates/*'];
  const cases = [
    { method: 'tools/list', want: 'tools/list' },
    { method: 'tools/call', want: 'tools/*' },
    { method: 'prompts/list', want: '*/list' },
    { method: 'resources/templates/list', want: 'resources/templates/*' },
    { method: 'ping', want: '*' },
  ];
  for (const c of cases) it(`${c.method} → ${c.want}`, () => assert.equal(mostSpecificPattern(patterns, c.method), c.want));

  it('nothing matches without a catch-all', () => assert.equal(mostSpecificPattern(['tools/*'], 'ping'), undefined));
});

describe('gateway routing table', () => {
  const cases = [
    { method: 'initialize', want: 'initialize' },
    { method: 'tools/list', want: 'list' },
    { method: 'resources/templates/list', want: 'list' },
    { method: 'tasks/list', want: 'single' },
    { method: 'tools/call', want: 'byName' },
    { method: 'resources/subscribe', want: 'byUri' },
    { method: 'completion/complete', want: 'byRef' },
    { method: 'notifications/cancelled', want: 'cancel' },
    { method: 'notifications/roots/list_changed', want: 'broadcast' },
    { method: 'notifications/initialized', want: 'swallow' },
    { method: 'ping', want: 'local' },
  ];
  for (const c of cases) it(`${c.method} is ${c.want}`, () => assert.equal(handlingOf(c.method), c.want));
});

describe('server-to-client request ids', () => {
  for (const id of [0, 42, 'abc', 'with~tilde "quotes"']) {
    it(`round-trips ${JSON.stringify(id)}`, () => assert.deepEqual(decodeServerRequestId(encodeServerRequestId('alpha', id)), { target: 'alpha', id }));
  }
  it('ignores ids the gateway did not issue', () => {
    assert.equal(decodeServerRequestId(7), undefined);
    assert.equal(decodeServerRequestId('sb~not-base64-json'), undefined);
    assert.equal(decodeServerRequestId(null), undefined);
  });
});
