/**
 * HTTP/2 from clients (h2 over TLS by ALPN, h2c with prior knowledge on a cleartext listener) and
 * to backends whose Service port says `appProtocol: kubernetes.io/h2c`.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createCertificate } from '../support/certs.ts';
import { startEchoServer, type EchoServer } from '../support/echo-server.ts';
import { startGateway, type GatewayHarness } from '../support/gateway.ts';
import { gateway, gatewayClass, service, tlsSecret } from '../support/manifests.ts';

describe('HTTP/2', () => {
  let echo: EchoServer;
  let gw: GatewayHarness;

  before(async () => {
    echo = await startEchoServer('echo');
    gw = await startGateway(gatewayClass() + service('echo', echo) + service('echo-h2c', echo, { appProtocol: 'kubernetes.io/h2c' }) +
      tlsSecret('h2-cert', await createCertificate(['h2.example.com'])) +
      gateway('gw', [
        { name: 'https', port: 443, protocol: 'HTTPS', hostname: 'h2.example.com', certificates: ['h2-cert'] },
        { name: 'http', port: 80 },
      ]) + `
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: { name: h2, namespace: default }
spec:
  parentRefs: [{ name: gw }]
  rules:
    - matches: [{ path: { type: PathPrefix, value: /h2c-backend } }]
      backendRefs: [{ name: echo-h2c, port: 8080 }]
    - backendRefs: [{ name: echo, port: 8080 }]
`);
  });
  after(async () => {
    await gw?.close();
    await echo?.close();
  });

  it('serves HTTP/2 over TLS negotiated by ALPN', async () => {
    const res = await gw.request2(443, { tls: true, host: 'h2.example.com', path: '/over-tls', method: 'POST', body: 'h2 body' });
    assert.equal(res.protocol, 'HTTP/2');
    assert.equal(res.status, 200);
    assert.equal(res.certificate?.commonName, 'h2.example.com');
    assert.equal(res.echo().path, '/over-tls');
    assert.equal(res.echo().host, 'h2.example.com');
    assert.equal(res.echo().bodyLength, 7);
  });

  it('still serves HTTP/1.1 on the TLS listener', async () => {
    const res = await gw.request(443, { tls: true, host: 'h2.example.com', path: '/h1' });
    assert.equal(res.status, 200);
  });

  it('serves h2c with prior knowledge on a cleartext listener', async () => {
    const res = await gw.request2(80, { host: 'plain.example.com', path: '/cleartext' });
    assert.equal(res.status, 200);
    assert.equal(res.echo().path, '/cleartext');
    assert.equal(res.echo().host, 'plain.example.com');
  });

  it('speaks h2c to a backend whose appProtocol asks for it', async () => {
    const res = await gw.request(80, { path: '/h2c-backend' });
    assert.equal(res.status, 200);
    assert.equal(res.echo().protocol, 'HTTP/2');
  });

  it('speaks HTTP/1.1 to a plain backend', async () => {
    const res = await gw.request(80, { path: '/plain-backend' });
    assert.equal(res.echo().protocol, 'HTTP/1.1');
  });
});
