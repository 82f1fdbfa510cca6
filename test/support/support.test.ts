/**
 * The support pieces are themselves tested: an e2e failure must mean the gateway is wrong, not the
 * echo server, the certificate helper or the clients.
 */
import assert from 'node:assert/strict';
import { X509Certificate, createPrivateKey } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import WebSocket from 'ws';
import { createCertificate } from './certs.ts';
import { sendHttp2Request, sendRequest } from './client.ts';
import { startEchoServer, type EchoServer } from './echo-server.ts';
import { service } from './manifests.ts';
import { startWebSocketEcho } from './ws-echo.ts';

describe('echo server', () => {
  let echo: EchoServer;
  before(async () => { echo = await startEchoServer('one'); });
  after(() => echo.close());

  it('reports what it saw over HTTP/1.1', async () => {
    const res = await sendRequest(echo.port, { path: '/a/b?x=1&x=2&y=z', host: 'h.example', method: 'POST', body: 'hello', headers: { 'x-test': 'v' } });
    assert.equal(res.status, 200);
    assert.equal(res.headers['x-echo-server'], 'one');
    const seen = res.echo();
    assert.equal(seen.server, 'one');
    assert.equal(seen.protocol, 'HTTP/1.1');
    assert.equal(seen.method, 'POST');
    assert.equal(seen.path, '/a/b');
    assert.deepEqual(seen.query, { x: ['1', '2'], y: 'z' });
    assert.equal(seen.host, 'h.example');
    assert.equal(seen.headers['x-test'], 'v');
    assert.equal(seen.bodyLength, 5);
    assert.equal(seen.bodySha256, '2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9824');
  });

  it('speaks h2c with prior knowledge on the same port', async () => {
    const res = await sendHttp2Request(echo.port, { path: '/h2', host: 'h2.example' });
    assert.equal(res.status, 200);
    assert.equal(res.echo().protocol, 'HTTP/2');
    assert.equal(res.echo().host, 'h2.example');
  });

  it('answers with the status and headers asked for', async () => {
    const res = await sendRequest(echo.port, { path: '/?status=418&respHeader=x-a:1&respHeader=x-a:2' });
    assert.equal(res.status, 418);
    assert.equal(res.headers['x-a'], '1, 2');
  });

  it('resets the connection on ?reset=1', async () => {
    await assert.rejects(sendRequest(echo.port, { path: '/?reset=1' }), /socket hang up|ECONNRESET/);
  });

  it('counts requests and waits for them', async () => {
    const before = echo.seen.length;
    await sendRequest(echo.port, { path: '/count' });
    const seen = await echo.waitForRequests(before + 1, 1000);
    assert.equal(seen.at(-1)?.path, '/count');
    await assert.rejects(echo.waitForRequests(before + 5, 50), /saw/);
  });
});

describe('websocket echo', () => {
  it('greets with the upgrade request and echoes messages', async () => {
    const server = await startWebSocketEcho('ws-one');
    try {
      const client = new WebSocket(`ws://127.0.0.1:${server.port}/chat?room=1`);
      const messages: string[] = [];
      await new Promise<void>((resolve, reject) => {
        client.on('error', reject);
        client.on('message', (data) => {
          messages.push(String(data));
          if (messages.length === 1) client.send('ping');
          else { client.close(); resolve(); }
        });
      });
      assert.equal(JSON.parse(messages[0]).path, '/chat?room=1');
      assert.equal(messages[1], 'ping');
    } finally {
      await server.close();
    }
  });
});

describe('certificates', () => {
  it('carries the CN and every SAN asked for', () => {
    const cert = createCertificate(['a.example.com', '*.a.example.com']);
    const x509 = new X509Certificate(cert.certPem);
    assert.match(x509.subject, /CN=a\.example\.com/);
    assert.equal(x509.subjectAltName, 'DNS:a.example.com, DNS:*.a.example.com');
    assert.ok(x509.checkPrivateKey(createPrivateKey(cert.keyPem)));
    assert.equal(createCertificate(['a.example.com', '*.a.example.com']), cert, 'cached per hostname list');
  });
});

describe('manifests', () => {
  it('points a Service and its EndpointSlice at the upstream', () => {
    const text = service('svc', { host: '127.0.0.1', port: 4321 }, { namespace: 'ns', port: 80 });
    assert.match(text, /kind: Service\n/);
    assert.match(text, /kubernetes.io\/service-name: svc/);
    assert.match(text, /port: 4321/);
    assert.match(text, /- 127.0.0.1/);
  });
});
