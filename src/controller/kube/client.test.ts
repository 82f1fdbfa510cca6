import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { KubeConfig } from '@kubernetes/client-node';
import { KubeApiError, KubeClient, MAX_RESPONSE_BYTES } from './client.ts';

/** A kubeconfig as a real cluster's: TLS settings (here insecure-skip-tls-verify) make client-node build a dispatcher per request. */
function kubeConfig(server: string): KubeConfig {
  const kc = new KubeConfig();
  kc.loadFromOptions({
    clusters: [{ name: 'c', server, skipTLSVerify: true }],
    users: [{ name: 'u', token: 'the-token' }],
    contexts: [{ name: 'ctx', cluster: 'c', user: 'u' }],
    currentContext: 'ctx',
  });
  return kc;
}

describe('KubeClient connections', () => {
  let server: http.Server;
  let url: string;
  let connections = 0;
  const authorizations: (string | undefined)[] = [];
  before(async () => {
    server = http.createServer((req, res) => {
      authorizations.push(req.headers.authorization);
      res.writeHead(200, { 'content-type': 'application/json' }).end('{"kind":"Status"}');
    });
    server.on('connection', () => connections++);
    await new Promise<void>((ok) => server.listen(0, '127.0.0.1', ok));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  after(async () => {
    server.closeAllConnections();
    await new Promise<void>((ok) => server.close(() => ok()));
  });

  const cases = [
    // Before: one connection (and, against a real API server, one TLS handshake) per request.
    // (undici may open a second socket while the first answer's end is still being processed.)
    { name: 'sequential requests share a connection', reuseMs: undefined, workers: 1, requests: 30, maxConnections: 2 },
    // The status writer's shape: 8 writes in flight at a time.
    { name: 'eight writers in flight share one pool', reuseMs: undefined, workers: 8, requests: 80, maxConnections: 16 },
    { name: 'a pool past its reuse time is replaced (a rotated certificate is picked up)', reuseMs: 0, workers: 1, requests: 5, minConnections: 5 },
  ];
  for (const c of cases) {
    it(c.name, async () => {
      connections = 0;
      authorizations.length = 0;
      const client = new KubeClient(kubeConfig(url), c.reuseMs === undefined ? {} : { dispatcherReuseMs: c.reuseMs });
      try {
        const worker = async (): Promise<void> => {
          for (let i = 0; i < c.requests / c.workers; i++) await client.request('GET', '/api/v1/namespaces');
        };
        await Promise.all(Array.from({ length: c.workers }, worker));
      } finally {
        await client.close();
      }
      assert.equal(authorizations.length, c.requests);
      assert.ok(authorizations.every((a) => a === 'Bearer the-token'), 'every request still carries the kubeconfig\'s credentials');
      if (c.maxConnections !== undefined) assert.ok(connections <= c.maxConnections, `${c.requests} requests opened ${connections} connections`);
      if (c.minConnections !== undefined) assert.ok(connections >= c.minConnections, `${connections} connections`);
    });
  }
});

describe('KubeClient answers', () => {
  let server: http.Server;
  let url: string;
  before(async () => {
    server = http.createServer((req, res) => {
      if (req.url?.startsWith('/missing')) return void res.writeHead(404, { 'content-type': 'application/json' }).end('{"kind":"Status","reason":"NotFound","message":"no such object"}');
      if (req.url?.startsWith('/huge')) return void res.writeHead(200, { 'content-type': 'application/json', 'content-length': String(MAX_RESPONSE_BYTES + 1) }).end();
      res.writeHead(200, { 'content-type': 'application/json' }).end('{"kind":"HTTPRoute","metadata":{"name":"r"}}');
    });
    await new Promise<void>((ok) => server.listen(0, '127.0.0.1', ok));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  after(async () => {
    server.closeAllConnections();
    await new Promise<void>((ok) => server.close(() => ok()));
  });

  const rows: { name: string; path: string; ignoreAnswer?: boolean; expect: unknown; error?: { statusCode: number; reason: string } }[] = [
    { name: 'a success is parsed', path: '/ok', expect: { kind: 'HTTPRoute', metadata: { name: 'r' } } },
    { name: 'ignoreAnswer: a success resolves without parsing (a status write\'s answer is the whole object)', path: '/ok', ignoreAnswer: true, expect: undefined },
    { name: 'ignoreAnswer: a failure still throws with the server\'s Status', path: '/missing', ignoreAnswer: true, expect: undefined, error: { statusCode: 404, reason: 'NotFound' } },
    { name: 'an answer announced over the bound is refused unread', path: '/huge', expect: undefined, error: { statusCode: 200, reason: 'TooLarge' } },
  ];
  for (const row of rows) {
    it(row.name, async () => {
      const client = new KubeClient(kubeConfig(url));
      try {
        const answer = client.request('PATCH', row.path, { body: { status: {} }, ...(row.ignoreAnswer ? { ignoreAnswer: true } : {}) });
        if (row.error) await assert.rejects(answer, (err: unknown) => err instanceof KubeApiError && err.statusCode === row.error!.statusCode && err.reason === row.error!.reason);
        else assert.deepEqual(await answer, row.expect);
      } finally {
        await client.close();
      }
    });
  }
});
