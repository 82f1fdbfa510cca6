import assert from 'node:assert/strict';
import type { Socket } from 'node:net';
import { describe, it } from 'node:test';
import type { buildConnector } from 'undici';
import { CheckedResolver } from '../../backends/dynamic-forward/resolver.ts';
import { AddressRefusedError, guardedConnector } from './guarded-connect.ts';

const DNS: Readonly<Record<string, readonly string[]>> = {
  'api.vendor.example': ['203.0.113.7'],
  'rebind.example': ['127.0.0.1'],
  'metadata.example': ['169.254.169.254'],
  'mixed.example': ['203.0.113.8', '10.0.0.1', 'fe80::1'],
  'mapped.example': ['::ffff:127.0.0.1'],
};
const resolver = (): CheckedResolver => new CheckedResolver({ lookup: (host) => (DNS[host] ? Promise.resolve(DNS[host]) : Promise.reject(new Error('ENOTFOUND'))) });

/** Runs the guarded connector once; the inner connector records what it was asked and "connects". */
function connect(hostname: string, servername?: string): Promise<{ err: Error | null; inner?: buildConnector.Options }> {
  let seen: buildConnector.Options | undefined;
  const inner: buildConnector.connector = (opts, callback) => {
    seen = opts;
    callback(null, {} as Socket);
  };
  return new Promise((resolve) => {
    guardedConnector(inner, resolver())({ hostname, host: `${hostname}:443`, protocol: 'https:', port: '443', ...(servername ? { servername } : {}) }, (...args: [Error | null, unknown]) => resolve({ err: args[0], ...(seen ? { inner: seen } : {}) }));
  });
}

describe('the SSRF guard at connect time (ProxyModel vendor addresses)', () => {
  it('connects to the checked address, keeping the name for TLS (SNI and certificate)', async () => {
    const { err, inner } = await connect('api.vendor.example');
    assert.equal(err, null);
    assert.equal(inner?.hostname, '203.0.113.7');
    assert.equal(inner?.servername, 'api.vendor.example');
  });

  const refused: { name: string; host: string; why: RegExp }[] = [
    { name: 'a public-looking name resolving to loopback (DNS rebinding)', host: 'rebind.example', why: /127\.0\.0\.1, a loopback address/ },
    { name: 'a name resolving to the metadata service', host: 'metadata.example', why: /169\.254\.169\.254, a metadata address/ },
    { name: 'a mixed answer with one link-local address', host: 'mixed.example', why: /fe80::1, a linkLocal address/ },
    { name: 'an IPv4-mapped loopback', host: 'mapped.example', why: /loopback/ },
    { name: 'a loopback literal in brackets', host: '[::1]', why: /::1, a loopback address/ },
    { name: 'a name that does not resolve (fail closed)', host: 'nowhere.example', why: /did not resolve/ },
  ];
  for (const row of refused) {
    it(`refuses ${row.name}, before any connection`, async () => {
      const { err, inner } = await connect(row.host);
      assert.ok(err instanceof AddressRefusedError, String(err));
      assert.match(err.message, row.why);
      assert.equal(inner, undefined);
    });
  }
});
