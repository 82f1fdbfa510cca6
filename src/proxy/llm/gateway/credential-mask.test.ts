import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { maskSecrets, sentSecrets } from './credential-mask.ts';

describe('credential masking', () => {
  const before = { headers: { 'content-type': 'application/json' }, path: '/v1/chat' };
  const rows: [string, { headers: Record<string, string>; path: string }, string, string][] = [
    ['bearer header, bare key echoed', { headers: { ...before.headers, authorization: 'Bearer sk-secret-123456' }, path: '/v1/chat' }, 'bad key sk-secret-123456', 'bad key [redacted]'],
    ['whole header echoed', { headers: { ...before.headers, authorization: 'Bearer sk-secret-123456' }, path: '/v1/chat' }, 'got Bearer sk-secret-123456', 'got [redacted]'],
    ['api key header', { headers: { ...before.headers, 'x-api-key': 'ant-key-abcdefgh' }, path: '/v1/chat' }, '"ant-key-abcdefgh"', '"[redacted]"'],
    ['query parameter', { headers: before.headers, path: '/v1/chat?key=goog-key-987654321' }, 'key goog-key-987654321 invalid', 'key [redacted] invalid'],
    ['two credentials, the second echoed', { headers: { ...before.headers, authorization: 'Bearer sk-secret-123456', 'x-goog-api-key': 'goog-key-987654321' }, path: '/v1/chat' }, 'key goog-key-987654321', 'key [redacted]'],
    ['nothing echoed', { headers: { ...before.headers, authorization: 'Bearer sk-secret-123456' }, path: '/v1/chat' }, 'rate limited', 'rate limited'],
  ];
  for (const [name, after, body, expected] of rows) {
    it(name, () => assert.equal(Buffer.from(maskSecrets(Buffer.from(body), sentSecrets(before, after))).toString(), expected));
  }

  it('a body is searched once per credential: a bearer header and its bare key are one search', () => {
    const secrets = sentSecrets(before, { headers: { ...before.headers, authorization: 'Bearer sk-secret-123456', 'x-goog-api-key': 'goog-key-987654321' }, path: '/v1/chat' });
    assert.deepEqual(secrets.values, ['Bearer sk-secret-123456', 'goog-key-987654321', 'sk-secret-123456']);
    assert.deepEqual(secrets.probes.map((p) => p.toString()), ['goog-key-987654321', 'sk-secret-123456']);
  });
});
