import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { jwtVerify } from 'jose';
import { silentLogger } from '../../../../common/logger.ts';
import { RemoteJwks, UNKNOWN_KID_REFETCH_INTERVAL_MS } from './jwks-source.ts';
import { jwks, testSigner, type TestSigner } from './test-keys.ts';

/** A JWKS server whose document and status the test changes; counts fetches. */
describe('RemoteJwks', () => {
  let server: Server;
  let port: number;
  let body: string;
  let status = 200;
  let fetches = 0;
  let first: TestSigner;
  let second: TestSigner;

  before(async () => {
    [first, second] = await Promise.all([testSigner('ES256', 'k1'), testSigner('RS256', 'k2')]);
    server = createServer((req, res) => {
      fetches++;
      assert.equal(req.url, '/.well-known/jwks.json');
      res.writeHead(status, { 'content-type': 'application/json' }).end(body);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as AddressInfo).port;
  });
  after(() => new Promise<void>((resolve) => server.close(() => resolve())));

  function source(clock: { now: number }, cacheDurationMs = 60_000) {
    fetches = 0;
    status = 200;
    return new RemoteJwks({ endpoint: () => ({ host: '127.0.0.1', port }), jwksPath: '/.well-known/jwks.json', cacheDurationMs, logger: silentLogger, now: () => clock.now });
  }
  const verify = async (s: RemoteJwks, signer: TestSigner) => jwtVerify(await signer.sign({ sub: 'x' }), s.lookup).then(() => true, () => false);

  it('fetches once, then serves from the cache until cacheDuration passes', async () => {
    body = jwks(first);
    const clock = { now: 1_000_000 };
    const s = source(clock);
    assert.equal(await verify(s, first), true);
    assert.equal(await verify(s, first), true);
    assert.equal(fetches, 1);
    clock.now += 60_000;
    assert.equal(await verify(s, first), true);
    assert.equal(fetches, 2);
  });

  it('refetches for an unknown kid (key rotation), at most once per interval', async () => {
    body = jwks(first);
    const clock = { now: 2_000_000 };
    const s = source(clock);
    assert.equal(await verify(s, first), true);
    body = jwks(first, second);
    clock.now += 1_000;
    assert.equal(await verify(s, second), false, 'too soon after the last fetch');
    assert.equal(fetches, 1);
    clock.now += UNKNOWN_KID_REFETCH_INTERVAL_MS;
    assert.equal(await verify(s, second), true, 'the rotated key is fetched');
    assert.equal(fetches, 2);
  });

  it('keeps known keys when a refresh fails', async () => {
    body = jwks(first);
    const clock = { now: 3_000_000 };
    const s = source(clock, 10_000);
    assert.equal(await verify(s, first), true);
    status = 503;
    clock.now += 10_000;
    assert.equal(await verify(s, first), true);
    assert.equal(fetches, 2);
    body = 'not json';
    status = 200;
    clock.now += 10_000;
    assert.equal(await verify(s, first), true, 'a malformed document counts as a failed fetch');
  });

  it('rejects when the JWKS was never fetched, shares one fetch between concurrent requests', async () => {
    const clock = { now: 4_000_000 };
    const s = source(clock);
    status = 500;
    assert.equal(await verify(s, first), false);
    body = jwks(first);
    status = 200;
    clock.now += 60_000;
    const results = await Promise.all([verify(s, first), verify(s, first), verify(s, first)]);
    assert.deepEqual(results, [true, true, true]);
    assert.equal(fetches, 2);
  });
});
