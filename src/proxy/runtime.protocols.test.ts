import assert from 'node:assert/strict';
import { once } from 'node:events';
import { request as httpsRequest } from 'node:https';
import { after, before, describe, it } from 'node:test';
import { connect as tlsConnect } from 'node:tls';
import WebSocket from 'ws';
import { silentLogger } from '../common/logger.ts';
import { ProxyRuntime } from './runtime.ts';
import { selfSignedCertificate, type TestCertificate } from './testing/certs.ts';
import { http1, http2 } from './testing/client.ts';
import { backend, bind, config, listener, route, rule } from './testing/config.ts';
import { startEchoServer, type EchoRecord, type EchoServer } from './testing/echo-server.ts';

describe('ProxyRuntime protocols: TLS + SNI, h2, h2c, WebSocket', () => {
  let h1Echo: EchoServer;
  let h2cEcho: EchoServer;
  let runtime: ProxyRuntime;
  let certA: TestCertificate;
  let certB: TestCertificate;

  before(async () => {
    h1Echo = await startEchoServer({ name: 'h1' });
    h2cEcho = await startEchoServer({ name: 'h2c', h2c: true });
    certA = await selfSignedCertificate(['a.example.com']);
    certB = await selfSignedCertificate(['x.b.example.com', '*.b.example.com']);
    const routes = [
      route('default/a', [rule('default/a/rule/0', { backends: [{ backendKey: 'svc-h1', weight: 1, filters: [] }] })]),
      route('default/b', [rule('default/b/rule/0', { backends: [{ backendKey: 'svc-h2c', weight: 1, filters: [] }] })]),
      route('default/plain', [
        rule('default/plain/rule/0', { matches: [{ path: { type: 'PathPrefix', value: '/grpc' } }], backends: [{ backendKey: 'svc-h2c', weight: 1, filters: [] }] }),
        rule('default/plain/rule/1', { matches: [{ path: { type: 'PathPrefix', value: '/ws' } }], backends: [{ backendKey: 'svc-h1', weight: 1, filters: [] }] }),
        rule('default/plain/rule/2', { matches: [{ path: { type: 'PathPrefix', value: '/' } }], backends: [{ backendKey: 'svc-h1', weight: 1, filters: [] }] }),
      ]),
    ];
    const httpsA = listener('https-a', ['default/a'], { hostname: 'a.example.com', protocol: 'HTTPS', tls: { certificates: [certA] } });
    const httpsB = listener('https-b', ['default/b'], { hostname: '*.b.example.com', protocol: 'HTTPS', tls: { certificates: [certB] } });
    runtime = new ProxyRuntime({ logger: silentLogger, bindAddress: '127.0.0.1', listenPort: () => 0 });
    const result = await runtime.apply(config({
      binds: [bind(443, [httpsA, httpsB], 'HTTPS'), bind(80, [listener('http', ['default/plain'])])],
      routes,
      backends: [backend('svc-h1', [h1Echo.port]), backend('svc-h2c', [h2cEcho.port], { appProtocol: 'kubernetes.io/h2c' })],
    }));
    assert.deepEqual(result.errors, []);
  });

  after(async () => {
    await runtime.close({ graceMs: 1000 });
    await Promise.all([h1Echo.close(), h2cEcho.close()]);
  });

  const tlsPort = () => runtime.portOf(443) as number;
  const plainPort = () => runtime.portOf(80) as number;

  it('negotiates h2 by ALPN and routes by SNI to the first listener', async () => {
    const r = await http2(`https://127.0.0.1:${tlsPort()}`, { path: '/hello', headers: { ':authority': 'a.example.com' } }, { servername: 'a.example.com', ca: certA.certPem });
    assert.equal(r.alpn, 'h2');
    assert.equal(r.status, 200);
    const seen = JSON.parse(r.body) as EchoRecord;
    assert.equal(seen.name, 'h1');
    assert.equal(seen.headers['x-forwarded-proto'], 'https');
    assert.equal(seen.headers.host, 'a.example.com');
  });

  it('serves the wildcard listener its own certificate and speaks h2c upstream for appProtocol h2c', async () => {
    const r = await http2(`https://127.0.0.1:${tlsPort()}`, { path: '/x', headers: { ':authority': 'x.b.example.com' } }, { servername: 'x.b.example.com', ca: certB.certPem });
    const seen = JSON.parse(r.body) as EchoRecord;
    assert.equal(seen.name, 'h2c');
    assert.equal(seen.httpVersion, '2.0');
  });

  it('presents the certificate matching SNI', async () => {
    for (const [servername, cn] of [['a.example.com', 'a.example.com'], ['y.b.example.com', 'x.b.example.com']]) {
      const socket = tlsConnect({ host: '127.0.0.1', port: tlsPort(), servername, rejectUnauthorized: false, ALPNProtocols: ['http/1.1'] });
      await once(socket, 'secureConnect');
      assert.equal(socket.getPeerCertificate().subject.CN, cn);
      socket.destroy();
    }
  });

  it('answers 421 when Host and SNI name different listeners on one TLS connection', async () => {
    const r = await http2(`https://127.0.0.1:${tlsPort()}`, { path: '/', headers: { ':authority': 'x.b.example.com' } }, { servername: 'a.example.com', ca: certA.certPem });
    assert.equal(r.status, 421);
  });

  it('passes WebSocket upgrades through over TLS', async () => {
    // ws hands TLS options through to https.request; its own type does not list servername.
    const options: WebSocket.ClientOptions & { servername: string } = { servername: 'a.example.com', ca: certA.certPem, headers: { host: 'a.example.com' } };
    const ws = new WebSocket(`wss://127.0.0.1:${tlsPort()}/ws`, options);
    const [first] = (await once(ws, 'message')) as [Buffer];
    assert.equal((JSON.parse(first.toString()) as { headers: Record<string, string> }).headers['x-forwarded-proto'], 'https');
    ws.close();
    await once(ws, 'close');
  });

  it('still speaks HTTP/1.1 over TLS', async () => {
    const body = await new Promise<string>((resolve, reject) => {
      const req = httpsRequest({ host: '127.0.0.1', port: tlsPort(), path: '/h1', servername: 'a.example.com', headers: { host: 'a.example.com' }, ca: certA.certPem, agent: false }, (res) => {
        let text = '';
        res.on('data', (c: Buffer) => (text += c.toString()));
        res.on('end', () => resolve(text));
      });
      req.on('error', reject);
      req.end();
    });
    const seen = JSON.parse(body) as EchoRecord;
    assert.equal(seen.url, '/h1');
  });

  it('accepts cleartext HTTP/2 with prior knowledge next to HTTP/1.1 on one port', async () => {
    const r2 = await http2(`http://127.0.0.1:${plainPort()}`, { path: '/over-h2c', method: 'POST', body: 'payload' });
    assert.equal(r2.status, 200);
    const seen = JSON.parse(r2.body) as EchoRecord;
    assert.equal(seen.url, '/over-h2c');
    assert.equal(seen.body, 'payload');
    const r1 = await http1(plainPort(), { path: '/over-h1' });
    assert.equal((JSON.parse(r1.body) as EchoRecord).url, '/over-h1');
  });

  it('carries h2c downstream to h2c upstream', async () => {
    const r = await http2(`http://127.0.0.1:${plainPort()}`, { path: '/grpc/svc', headers: { te: 'trailers', 'x-echo-trailer': 'done' } });
    const seen = JSON.parse(r.body) as EchoRecord;
    assert.equal(seen.name, 'h2c');
    assert.equal(seen.headers.te, 'trailers');
    assert.equal(r.trailers['x-trailer'], 'done', 'response trailers (gRPC status) pass through');
  });

  it('passes WebSocket upgrades through in both directions', async () => {
    const ws = new WebSocket(`ws://127.0.0.1:${plainPort()}/ws/chat`, { headers: { host: 'chat.example.com' } });
    const messages: string[] = [];
    ws.on('message', (data: Buffer) => messages.push(data.toString()));
    await once(ws, 'open');
    while (messages.length < 1) await once(ws, 'message');
    const hello = JSON.parse(messages[0]) as { url: string; headers: Record<string, string> };
    assert.equal(hello.url, '/ws/chat');
    assert.equal(hello.headers.host, 'chat.example.com');
    assert.equal(hello.headers['x-forwarded-for'], '127.0.0.1');
    ws.send('ping-1');
    while (messages.length < 2) await once(ws, 'message');
    assert.equal(messages[1], 'ping-1');
    ws.close();
    await once(ws, 'close');
  });

  it('rotates certificates on apply without reopening the port', async () => {
    const port = tlsPort();
    const rotated = await selfSignedCertificate(['a.example.com', 'rotated.example.com']);
    const current = runtime.current();
    assert.ok(current);
    const binds = current.binds.map((b) => b.port !== 443 ? b : {
      ...b,
      listeners: b.listeners.map((l) => (l.sectionName === 'https-a' ? { ...l, tls: { certificates: [rotated] } } : l)),
    });
    assert.deepEqual((await runtime.apply({ ...current, version: 'rotated', binds })).errors, []);
    assert.equal(tlsPort(), port);
    const socket = tlsConnect({ host: '127.0.0.1', port, servername: 'a.example.com', ca: rotated.certPem, ALPNProtocols: ['http/1.1'] });
    await once(socket, 'secureConnect');
    assert.match(socket.getPeerCertificate().subjectaltname ?? '', /rotated\.example\.com/);
    socket.destroy();
  });

  it('answers an upgrade with an error status when the route has no backend', async () => {
    await runtime.apply(config({
      version: 'v2',
      binds: [bind(80, [listener('http', ['default/none'])])],
      routes: [route('default/none', [rule('default/none/rule/0')])],
      backends: [],
    }));
    const ws = new WebSocket(`ws://127.0.0.1:${plainPort()}/ws`);
    // ws reports the refused handshake as an error too; the status is what this test checks.
    ws.on('error', () => undefined);
    const [, res] = (await once(ws, 'unexpected-response')) as [unknown, { statusCode: number; destroy(): void }];
    assert.equal(res.statusCode, 500);
    res.destroy();
    ws.terminate();
  });
});
