/**
 * The support pieces are themselves tested: an e2e failure must mean the gateway is wrong, not the
 * echo server, the certificate helper or the clients.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { X509Certificate, createPrivateKey } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { connect as tlsConnect, createServer as createTlsServer, type Server as TlsServer } from 'node:tls';
import WebSocket from 'ws';
import { createCertificate } from './certs.ts';
import { sendHttp2Request, sendRequest } from './client.ts';
import { startEchoServer, type EchoServer } from './echo-server.ts';
import { service } from './manifests.ts';
import { startWebSocketEcho } from './ws-echo.ts';
import { RESERVATIONS, reservePort, unusedPort } from './ports.ts';

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
  it('carries the CN and every SAN asked for', async () => {
    const cert = await createCertificate(['a.example.com', '*.a.example.com']);
    const x509 = new X509Certificate(cert.certPem);
    assert.match(x509.subject, /CN=a\.example\.com/);
    assert.equal(x509.subjectAltName, 'DNS:a.example.com, DNS:*.a.example.com');
    assert.equal(cert.commonName, 'a.example.com');
    assert.deepEqual(cert.hostnames, ['a.example.com', '*.a.example.com']);
    assert.ok(x509.checkPrivateKey(createPrivateKey(cert.keyPem)));
    assert.equal(await createCertificate(['a.example.com', '*.a.example.com']), cert, 'cached per hostname list');
    assert.notEqual(await createCertificate(['b.example.com']), cert, 'another hostname list, another certificate');
  });

  it('is a self-signed CA, valid now, with a P-256 key as PKCS#8 PEM', async () => {
    const cert = await createCertificate(['ca.example.com']);
    const x509 = new X509Certificate(cert.certPem);
    assert.ok(x509.verify(x509.publicKey), 'signed by its own key');
    assert.equal(x509.ca, true, 'usable as its own trust anchor');
    const now = Date.now();
    assert.ok(Date.parse(x509.validFrom) <= now && now < Date.parse(x509.validTo), `${x509.validFrom} .. ${x509.validTo}`);
    assert.match(cert.keyPem, /^-----BEGIN PRIVATE KEY-----\n[\s\S]+\n-----END PRIVATE KEY-----\n$/);
    const key = createPrivateKey(cert.keyPem);
    assert.equal(key.asymmetricKeyType, 'ec');
    assert.equal(key.asymmetricKeyDetails?.namedCurve, 'prime256v1');
  });

  it('refuses an empty hostname list', async () => {
    await assert.rejects(createCertificate([]), /at least one hostname/);
  });

  describe('node:tls accepts them as server and mTLS client certificates', async () => {
    const serverCert = await createCertificate(['tls.example.com', '*.tls.example.com']);
    const clientCert = await createCertificate(['client.example.com']);
    let server: TlsServer;
    before(async () => {
      server = createTlsServer({ cert: serverCert.certPem, key: serverCert.keyPem, ca: clientCert.certPem, requestCert: true, rejectUnauthorized: true },
        (socket) => socket.end(String((socket.getPeerCertificate().subject as { CN?: string } | undefined)?.CN)));
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    });
    after(() => new Promise<void>((resolve) => server.close(() => resolve())));

    const handshake = (servername: string) => new Promise<string>((resolve, reject) => {
      const socket = tlsConnect({ host: '127.0.0.1', port: (server.address() as AddressInfo).port, servername, ca: serverCert.certPem, cert: clientCert.certPem, key: clientCert.keyPem });
      let body = '';
      socket.on('data', (chunk: Buffer) => (body += chunk.toString()));
      socket.on('end', () => resolve(body));
      socket.on('error', reject);
    });
    const cases = [
      { name: 'the CN', servername: 'tls.example.com' },
      { name: 'a wildcard SAN', servername: 'x.tls.example.com' },
    ];
    for (const { name, servername } of cases) {
      it(`verifies by ${name}; the server sees the client certificate's CN`, async () => {
        assert.equal(await handshake(servername), 'client.example.com');
      });
    }
    it('fails a name outside the SAN', async () => {
      await assert.rejects(handshake('other.example.com'), { code: 'ERR_TLS_CERT_ALTNAME_INVALID' });
    });
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

describe('test ports', () => {
  // Ports far above where walks usually are would still be walked to; these are only written, never bound.
  const port = (offset: number): number => 31_000 + (process.pid % 500) + offset;
  const holdBy = (p: number, pid: number): void => {
    mkdirSync(RESERVATIONS, { recursive: true });
    writeFileSync(join(RESERVATIONS, String(p)), String(pid));
  };

  it('does not hand out a port another live test process reserved', async () => {
    const other = spawn(process.execPath, ['-e', 'setTimeout(() => {}, 30_000)'], { stdio: 'ignore' });
    try {
      holdBy(port(0), other.pid as number);
      assert.equal(reservePort(port(0)), false);
    } finally {
      other.kill();
      rmSync(join(RESERVATIONS, String(port(0))), { force: true });
    }
  });

  it('takes over the reservation of a process that is gone', async () => {
    const gone = spawn(process.execPath, ['-e', ''], { stdio: 'ignore' });
    await once(gone, 'exit');
    holdBy(port(1), gone.pid as number);
    assert.equal(reservePort(port(1)), true);
    assert.equal(readFileSync(join(RESERVATIONS, String(port(1))), 'utf8'), String(process.pid));
  });

  it('reserves what it hands out for this process', async () => {
    const p = await unusedPort();
    assert.equal(readFileSync(join(RESERVATIONS, String(p)), 'utf8'), String(process.pid));
  });
});
