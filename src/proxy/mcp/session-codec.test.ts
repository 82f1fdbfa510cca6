import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { silentLogger } from '../../common/logger.ts';
import { decodeSession, encodeSession, resolveSessionKey, type SessionState } from './session-codec.ts';

const KEY = Buffer.alloc(32, 1);
const STATE: SessionState = { pv: '2025-06-18', targets: { a: { sid: 'up-1', pv: '2025-06-18' }, b: { pv: '2024-11-05' } }, client: { clientInfo: { name: 'c' } }, iat: 1700000000 };

describe('session codec', () => {
  it('round-trips, and every id is different (random IV)', () => {
    const one = encodeSession(STATE, KEY, 'backend/ns/x');
    const two = encodeSession(STATE, KEY, 'backend/ns/x');
    assert.notEqual(one, two);
    assert.deepEqual(decodeSession(one, KEY, 'backend/ns/x'), STATE);
    assert.match(one, /^sb1\.[A-Za-z0-9_-]+$/, 'visible ASCII, header-safe');
  });

  it('carries the pinned endpoint of a target, compactly', () => {
    const pinned: SessionState = { ...STATE, targets: { a: { sid: 'up-1', pv: '2025-06-18', ep: '10.244.1.7:3001' }, b: { pv: '2024-11-05', ep: '[fd00::7]:3001' } } };
    const id = encodeSession(pinned, KEY, 'backend/ns/x');
    assert.deepEqual(decodeSession(id, KEY, 'backend/ns/x'), pinned);
    // Two endpoints add their text (plus a few bytes of JSON) and base64's third, nothing more.
    const plain = encodeSession(STATE, KEY, 'backend/ns/x');
    assert.ok(id.length - plain.length <= Math.ceil(((`,"ep":"10.244.1.7:3001"`.length + `,"ep":"[fd00::7]:3001"`.length) * 4) / 3) + 4, `${id.length} vs ${plain.length}`);
  });

  it('still decodes ids issued before endpoints were pinned (no ep)', () => {
    // Sealed exactly as the previous encoder did: the state as JSON, without any ep member.
    const old = encodeSession(JSON.parse('{"pv":"2025-06-18","targets":{"a":{"sid":"up-1","pv":"2025-06-18"}},"client":{},"iat":1700000000}') as SessionState, KEY, 'k');
    const state = decodeSession(old, KEY, 'k');
    assert.equal(state?.targets.a.sid, 'up-1');
    assert.equal(state?.targets.a.ep, undefined);
  });

  it('rejects a state whose endpoint is not a string', () => {
    const bad = { ...STATE, targets: { a: { pv: '2025-06-18', ep: 3001 } } } as unknown as SessionState;
    assert.equal(decodeSession(encodeSession(bad, KEY, 'k'), KEY, 'k'), undefined);
  });

  it('hides the upstream session ids', () => {
    assert.ok(!encodeSession(STATE, KEY, 'k').includes('up-1'));
    assert.ok(!Buffer.from(encodeSession(STATE, KEY, 'k').slice(4), 'base64url').toString('latin1').includes('up-1'));
  });

  const id = encodeSession(STATE, KEY, 'backend/ns/x');
  const raw = Buffer.from(id.slice(4), 'base64url');
  const flipped = Buffer.from(raw);
  flipped[flipped.length - 1] ^= 1;
  const rejected = [
    { name: 'a flipped ciphertext bit', id: 'sb1.' + flipped.toString('base64url'), key: KEY, backend: 'backend/ns/x' },
    { name: 'another key', id, key: Buffer.alloc(32, 2), backend: 'backend/ns/x' },
    { name: 'another backend', id, key: KEY, backend: 'backend/ns/y' },
    { name: 'a truncated id', id: id.slice(0, 20), key: KEY, backend: 'backend/ns/x' },
    { name: 'a foreign id', id: '6f1c2d3e-uuid', key: KEY, backend: 'backend/ns/x' },
  ];
  for (const c of rejected) it(`rejects ${c.name}`, () => assert.equal(decodeSession(c.id, c.key, c.backend), undefined));

  it('resolves the key from options, SESSION_KEY or a random fallback', () => {
    assert.equal(resolveSessionKey(KEY, {}, silentLogger), KEY);
    assert.deepEqual(resolveSessionKey(undefined, { SESSION_KEY: 'ab'.repeat(32) }, silentLogger), Buffer.alloc(32, 0xab));
    assert.equal(resolveSessionKey(undefined, {}, silentLogger).length, 32);
    assert.throws(() => resolveSessionKey(undefined, { SESSION_KEY: 'abc' }, silentLogger), /64 hexadecimal/);
    assert.throws(() => resolveSessionKey(Buffer.alloc(16), {}, silentLogger), /32 bytes/);
  });
});
