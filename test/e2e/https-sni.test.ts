/** HTTPS listeners on one port, each with its own certificate, chosen by SNI. */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createCertificate } from '../support/certs.ts';
import { startEchoServer, type EchoServer } from '../support/echo-server.ts';
import { conditionOf, startGateway, type GatewayHarness } from '../support/gateway.ts';
import { gateway, gatewayClass, service, tlsSecret } from '../support/manifests.ts';

describe('HTTPS with certificates selected by SNI', () => {
  let echo: EchoServer;
  let gw: GatewayHarness;

  before(async () => {
    echo = await startEchoServer('echo');
    gw = await startGateway(gatewayClass() + service('echo', echo) +
      tlsSecret('a-cert', await createCertificate(['a.example.com'])) +
      tlsSecret('b-cert', await createCertificate(['b.example.com', '*.b.example.com'])) +
      gateway('gw', [
        { name: 'https-a', port: 443, protocol: 'HTTPS', hostname: 'a.example.com', certificates: ['a-cert'] },
        { name: 'https-b', port: 443, protocol: 'HTTPS', hostname: '*.b.example.com', certificates: ['b-cert'] },
      ]) + `
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: { name: secure, namespace: default }
spec:
  parentRefs: [{ name: gw }]
  rules: [{ backendRefs: [{ name: echo, port: 8080 }] }]
`);
  });
  after(async () => {
    await gw?.close();
    await echo?.close();
  });

  const cases = [
    { host: 'a.example.com', commonName: 'a.example.com', san: 'DNS:a.example.com' },
    { host: 'x.b.example.com', commonName: 'b.example.com', san: 'DNS:b.example.com, DNS:*.b.example.com' },
  ];
  for (const c of cases) {
    it(`presents the certificate for ${c.host} and serves the route`, async () => {
      const res = await gw.request(443, { tls: true, host: c.host, path: '/secure' });
      assert.equal(res.certificate?.commonName, c.commonName);
      assert.equal(res.certificate?.subjectAltName, c.san);
      assert.equal(res.status, 200);
      assert.equal(res.echo().host, c.host);
      assert.equal(res.echo().path, '/secure');
    });
  }

  it('programs both HTTPS listeners', () => {
    const listeners = gw.statusOf('Gateway', 'gw').listeners as { name: string; conditions: unknown }[];
    for (const name of ['https-a', 'https-b']) {
      const listener = listeners.find((l) => l.name === name);
      assert.equal(conditionOf(listener?.conditions, 'Programmed')?.status, 'True', name);
      assert.equal(conditionOf(listener?.conditions, 'ResolvedRefs')?.status, 'True', name);
    }
  });
});
