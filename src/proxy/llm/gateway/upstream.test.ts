import assert from 'node:assert/strict';
import { once } from 'node:events';
import http from 'node:http';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { Pool } from 'undici';
import type { BackendPolicy } from '../../../ir/policy.ts';
import type { AiProviderIR } from '../../../ir/ai.ts';
import { createCertificate } from '../../../../test/support/certs.ts';
import { bufferedRequest, ClientGoneError, ProviderPools, ReplicaTurns, type AbortSource } from './upstream.ts';

function abortSource(): AbortSource & { abort(): void; listeners(): number } {
  const listeners = new Set<() => void>();
  let aborted = false;
  return {
    get aborted() {
      return aborted;
    },
    onAbort(listener) {
      listeners.add(listener);
      return () => void listeners.delete(listener);
    },
    abort() {
      aborted = true;
      for (const l of listeners) l();
    },
    listeners: () => listeners.size,
  };
}

const neverAborted = (): AbortSource => abortSource();

describe('bufferedRequest', () => {
  let server: http.Server;
  let pool: Pool;
  const closedRequests: string[] = [];

  before(async () => {
    server = http.createServer((req, res) => {
      req.on('close', () => {
        if (!res.writableEnded) closedRequests.push(req.url ?? '');
      });
      if (req.url === '/chunks') {
        res.writeHead(201, { 'content-type': 'application/json', 'x-upstream': 'yes' });
        res.write('{"a":');
        setTimeout(() => res.end('1}'), 10);
        return;
      }
      if (req.url === '/echo') {
        const chunks: Buffer[] = [];
        req.on('data', (c: Buffer) => chunks.push(c));
        req.on('end', () => res.end(Buffer.concat(chunks)));
        return;
      }
      // '/hang': never answers
    });
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    pool = new Pool(`http://127.0.0.1:${(server.address() as AddressInfo).port}`);
  });

  after(async () => {
    await pool.destroy();
    server.closeAllConnections();
    server.close();
  });

  it('collects status, headers and a body sent in several chunks', async () => {
    const r = await bufferedRequest(pool, { method: 'GET', path: '/chunks' }, neverAborted());
    assert.equal(r.statusCode, 201);
    assert.equal(r.headers['x-upstream'], 'yes');
    assert.equal(r.body.toString(), '{"a":1}');
  });

  it('sends the request body', async () => {
    const r = await bufferedRequest(pool, { method: 'POST', path: '/echo', body: Buffer.from('hello') }, neverAborted());
    assert.equal(r.body.toString(), 'hello');
  });

  it('rejects and drops the upstream request when the client goes away', async () => {
    const abort = abortSource();
    const pending = bufferedRequest(pool, { method: 'GET', path: '/hang' }, abort);
    setTimeout(() => abort.abort(), 50);
    await assert.rejects(pending, ClientGoneError);
    for (let i = 0; i < 50 && !closedRequests.includes('/hang'); i++) await new Promise((ok) => setTimeout(ok, 10));
    assert.ok(closedRequests.includes('/hang'), 'the upstream saw its request end');
  });

  it('rejects at once when the client is already gone', async () => {
    const abort = abortSource();
    abort.abort();
    await assert.rejects(bufferedRequest(pool, { method: 'GET', path: '/chunks' }, abort), ClientGoneError);
  });

  it('stops listening for the client once the answer is complete', async () => {
    const abort = abortSource();
    await bufferedRequest(pool, { method: 'GET', path: '/chunks' }, abort);
    assert.equal(abort.listeners(), 0);
  });

  it('rejects with undici\'s headers-timeout code when the upstream does not answer in time', async () => {
    await assert.rejects(
      bufferedRequest(pool, { method: 'GET', path: '/hang', headersTimeout: 100 }, neverAborted()),
      (err: { code?: string }) => err.code === 'UND_ERR_HEADERS_TIMEOUT',
    );
  });
});

describe('ProviderPools.acquire', () => {
  const target = (host: string, port: number, tls = false) => ({ host, port, tls });

  it('hands out one pool per origin and connection settings, however the calls interleave', async () => {
    const pools = new ProviderPools();
    const policy = { http: { requestTimeoutMs: 1000 } } as BackendPolicy;
    const a = pools.acquire(target('127.0.0.1', 1001), undefined);
    const b = pools.acquire(target('127.0.0.1', 1002), undefined);
    const aTls = pools.acquire(target('127.0.0.1', 1001, true), undefined);
    assert.notEqual(a, b);
    assert.notEqual(a, aTls);
    assert.equal(pools.acquire(target('127.0.0.1', 1001), undefined), a);
    assert.equal(pools.acquire(target('127.0.0.1', 1002), undefined), b);
    assert.equal(pools.acquire(target('127.0.0.1', 1001), policy), a, 'a policy without connection settings shares the plain pool');
    assert.equal(pools.acquire(target('127.0.0.1', 1001, true), undefined), aTls);
    await pools.close();
    assert.notEqual(pools.acquire(target('127.0.0.1', 1001), undefined), a, 'closing forgets the pools, the last one included');
    await pools.close();
  });
});

describe('ReplicaTurns', () => {
  const own = { host: 'vllm.default.svc.cluster.local', port: 8000, tls: false };
  const provider = (endpoints?: { host: string; port: number }[]) => ({ name: 'p', provider: { custom: { formats: [] } }, ...(endpoints ? { endpoints } : {}) }) as unknown as AiProviderIR;

  it('takes the replicas in turn, keeping the provider name for TLS', () => {
    const turns = new ReplicaTurns();
    const p = provider([{ host: '10.0.0.8', port: 8000 }, { host: '10.0.0.9', port: 8001 }]);
    const picked = [1, 2, 3].map(() => turns.target(p, own));
    assert.deepEqual(picked.map((t) => `${t.host}:${t.port}`), ['10.0.0.8:8000', '10.0.0.9:8001', '10.0.0.8:8000']);
    assert.ok(picked.every((t) => t.serverName === own.host && t.tls === false));
  });

  it('leaves a provider without replicas at its own address', () => {
    assert.equal(new ReplicaTurns().target(provider(), own), own);
    assert.equal(new ReplicaTurns().target(provider([]), own), own);
  });
});

describe('ProviderPools: a TLS provider under a policy without tls', () => {
  let server: https.Server;
  let port: number;
  const plaintext: string[] = [];

  before(async () => {
    const cert = await createCertificate(['provider.test']);
    server = https.createServer({ cert: cert.certPem, key: cert.keyPem }, (_req, res) => res.end('{}'));
    // A plaintext request to the TLS port shows up as a TLS client error with the request line as its bytes.
    server.on('tlsClientError', (err) => plaintext.push(err.message));
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    port = (server.address() as AddressInfo).port;
  });
  after(() => {
    server.closeAllConnections();
    server.close();
  });

  // tcp/tunnel settings alone must not turn a provider that speaks TLS into a plaintext one.
  for (const [name, policy] of [['tcp.connectTimeout', { tcp: { connectTimeoutMs: 2000 } }], ['http.version HTTP1', { http: { version: 'HTTP1' } }]] as const) {
    it(`${name}: the connection still speaks TLS (verified against the system CAs, which refuse the test certificate)`, async () => {
      const pools = new ProviderPools();
      try {
        const pool = pools.acquire({ host: '127.0.0.1', port, tls: true, serverName: 'provider.test' }, policy as unknown as BackendPolicy);
        await assert.rejects(
          bufferedRequest(pool, { method: 'GET', path: '/', headers: { host: 'provider.test' } }, neverAborted()),
          (err: Error & { code?: string }) => /CERT|SELF_SIGNED|UNABLE_TO_VERIFY|DEPTH_ZERO/.test(`${err.code ?? ''} ${err.message}`),
        );
      } finally {
        await pools.close();
      }
    });
  }
});
