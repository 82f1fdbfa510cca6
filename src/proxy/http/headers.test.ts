import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { addForwardedHeaders, endToEndHeaders, endToEndResponseHeaders } from './headers.ts';

describe('endToEndHeaders', () => {
  it('drops hop-by-hop fields, the ones Connection names, pseudo headers and host', () => {
    const out = endToEndHeaders({
      host: 'a.com',
      ':authority': 'a.com',
      connection: 'keep-alive, X-Private',
      'x-private': 'secret',
      'keep-alive': 'timeout=5',
      'transfer-encoding': 'chunked',
      upgrade: 'websocket',
      'proxy-authorization': 'Basic x',
      te: 'gzip',
      expect: '100-continue',
      accept: 'text/plain',
    });
    assert.deepEqual(out, { accept: 'text/plain' });
  });

  it('keeps TE: trailers (gRPC needs it)', () => {
    assert.deepEqual(endToEndHeaders({ te: 'trailers' }), { te: 'trailers' });
  });

  for (const connection of ['keep-alive', 'Keep-Alive', 'close', 'Upgrade']) {
    it(`drops hop-by-hop fields with the common Connection: ${connection}`, () => {
      const out = endToEndResponseHeaders({ connection, 'keep-alive': 'timeout=5', upgrade: 'h2c', 'content-type': 'text/plain' });
      assert.deepEqual(out, { 'content-type': 'text/plain' });
    });
  }

  it('does the same for responses, keeping repeated fields', () => {
    assert.deepEqual(endToEndResponseHeaders({ connection: 'close', 'set-cookie': ['a=1', 'b=2'] }), { 'set-cookie': ['a=1', 'b=2'] });
  });
});

describe('addForwardedHeaders', () => {
  it('appends to an existing X-Forwarded-For', () => {
    const h: Record<string, string | string[]> = { 'x-forwarded-for': '10.0.0.1' };
    addForwardedHeaders(h, '127.0.0.1', 'https', 'a.com');
    assert.deepEqual(h, { 'x-forwarded-for': '10.0.0.1, 127.0.0.1', 'x-forwarded-proto': 'https', 'x-forwarded-host': 'a.com' });
  });

  it('starts one when there is none', () => {
    const h: Record<string, string | string[]> = {};
    addForwardedHeaders(h, '::1', 'http', undefined);
    assert.deepEqual(h, { 'x-forwarded-for': '::1', 'x-forwarded-proto': 'http' });
  });
});
