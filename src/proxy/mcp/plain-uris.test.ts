import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { PlainUris } from './plain-uris.ts';

describe('PlainUris', () => {
  it('remembers per session and target, clears on an unprefixed-form false, forgets a dropped session', () => {
    const plain = new PlainUris();
    plain.set('s1', 'alpha', 'a://x', true);
    const cases = [
      { name: 'recorded', session: 's1', target: 'alpha', uri: 'a://x', want: true },
      { name: 'another target, same URI', session: 's1', target: 'beta', uri: 'a://x', want: false },
      { name: 'another session', session: 's2', target: 'alpha', uri: 'a://x', want: false },
      { name: 'no session (stateless)', session: undefined, target: 'alpha', uri: 'a://x', want: false },
    ];
    for (const c of cases) assert.equal(plain.has(c.session, c.target, c.uri), c.want, c.name);
    plain.set('s1', 'alpha', 'a://x', false);
    assert.equal(plain.has('s1', 'alpha', 'a://x'), false, 'cleared by a prefixed subscribe or an unsubscribe');
    plain.set('s1', 'alpha', 'a://y', true);
    plain.drop('s1');
    assert.equal(plain.has('s1', 'alpha', 'a://y'), false, 'dropped with the session');
  });

  it('is bounded: the least recently used session is forgotten first, and a session keeps at most 1000 URIs', () => {
    const plain = new PlainUris();
    plain.set('old', 't', 'u://1', true);
    plain.set('used', 't', 'u://1', true);
    for (let i = 0; i < 9_998; i++) plain.set(`s${i}`, 't', 'u://1', true);
    plain.set('used', 't', 'u://2', true); // refreshes "used"
    plain.set('new', 't', 'u://1', true); // the 10 001st session evicts the least recent
    assert.equal(plain.has('old', 't', 'u://1'), false);
    assert.equal(plain.has('used', 't', 'u://1'), true);
    assert.equal(plain.has('new', 't', 'u://1'), true);
    for (let i = 0; i < 1_200; i++) plain.set('big', 't', `u://${i}`, true);
    assert.equal(plain.has('big', 't', 'u://999'), true);
    assert.equal(plain.has('big', 't', 'u://1000'), false, 'beyond the bound: the prefixed form');
  });
});
