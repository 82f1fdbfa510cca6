import assert from 'node:assert/strict';
import { once } from 'node:events';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { Pool } from 'undici';
import { bufferedRequest } from './upstream.ts';

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
    const r = await bufferedRequest(pool, { method: 'GET', path: '/chunks' }, new AbortController().signal);
    assert.equal(r.statusCode, 201);
    assert.equal(r.headers['x-upstream'], 'yes');
    assert.equal(r.body.toString(), '{"a":1}');
  });

  it('sends the request body', async () => {
    const r = await bufferedRequest(pool, { method: 'POST', path: '/echo', body: Buffer.from('hello') }, new AbortController().signal);
    assert.equal(r.body.toString(), 'hello');
  });

  it('rejects with the reason and drops the upstream request when the signal aborts', async () => {
    const abort = new AbortController();
    const pending = bufferedRequest(pool, { method: 'GET', path: '/hang' }, abort.signal);
    setTimeout(() => abort.abort(new Error('client went away')), 50);
    await assert.rejects(pending, /client went away/);
    for (let i = 0; i < 50 && !closedRequests.includes('/hang'); i++) await new Promise((ok) => setTimeout(ok, 10));
    assert.ok(closedRequests.includes('/hang'), 'the upstream saw its request end');
  });

  it('rejects at once when the signal is already aborted', async () => {
    const abort = new AbortController();
    abort.abort(new Error('too late'));
    await assert.rejects(bufferedRequest(pool, { method: 'GET', path: '/chunks' }, abort.signal), /too late/);
  });

  it('rejects with undici\'s headers-timeout code when the upstream does not answer in time', async () => {
    await assert.rejects(
      bufferedRequest(pool, { method: 'GET', path: '/hang', headersTimeout: 100 }, new AbortController().signal),
      (err: { code?: string }) => err.code === 'UND_ERR_HEADERS_TIMEOUT',
    );
  });
});
