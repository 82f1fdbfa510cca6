/**
 * Backend policy http, tcp and tunnel through YAML: version HTTP2 as h2c on plaintext,
 * requestTimeout, keepalive/connectTimeout accepted, and endpoints reached through an HTTP
 * CONNECT proxy, in plaintext and with TLS originated inside the tunnel.
 */
import assert from 'node:assert/strict';
import { createServer as createHttpsServer, type Server as HttpsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import type { TLSSocket } from 'node:tls';
import { createCertificate } from '../support/certs.ts';
import { startConnectProxy, type ConnectProxy } from '../support/connect-proxy.ts';
import { after, before, describe, it } from 'node:test';
import { stringify } from 'yaml';
import { startEchoServer, type EchoServer } from '../support/echo-server.ts';
import { startGateway, type GatewayHarness } from '../support/gateway.ts';
import { gateway, gatewayClass, service } from '../support/manifests.ts';

const cert = await createCertificate(['tunneled.test']);

const doc = (o: unknown) => `---\n${stringify(o)}`;

const RULES: Record<string, Record<string, unknown>> = {
  h2c: { http: { version: 'HTTP2' }, tcp: { connectTimeout: '2s', keepalive: { time: '30s' } } },
  h1: { http: { version: 'HTTP1' } },
  // Generous against a loaded machine: the fast case must never hit it.
  deadline: { http: { requestTimeout: '1s' } },
};

describe('backend policy: http and tcp', () => {
  let echo: EchoServer;
  let gw: GatewayHarness;
  let proxy: ConnectProxy;
  let secure: HttpsServer;

  before(async () => {
    echo = await startEchoServer('echo');
    proxy = await startConnectProxy();
    secure = createHttpsServer({ cert: cert.certPem, key: cert.keyPem }, (req, res) => {
      res.end(JSON.stringify({ servername: (req.socket as TLSSocket & { servername?: string }).servername }));
    });
    await new Promise<void>((resolve) => secure.listen(0, '127.0.0.1', () => resolve()));
    const proxyUrl = proxy.url;
    RULES.tunneled = { tunnel: { url: proxyUrl } };
    RULES['tunneled-tls'] = { tunnel: { url: proxyUrl }, tls: { sni: 'tunneled.test', caCertificateRefs: [{ name: 'tunneled-ca' }] } };
    const rules = Object.keys(RULES).map((name) => ({
      name,
      matches: [{ path: { type: 'Exact', value: `/${name}` } }],
      backendRefs: [name === 'tunneled-tls' ? { name: 'secure', port: 8443 } : { name: 'echo', port: 8080 }],
    }));
    gw = await startGateway(gatewayClass() + service('echo', echo) + gateway('gw', [{ name: 'http', port: 80 }])
      + service('secure', { host: '127.0.0.1', port: (secure.address() as AddressInfo).port }, { port: 8443 })
      + doc({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'tunneled-ca', namespace: 'default' }, data: { 'ca.crt': cert.certPem } })
      + doc({ apiVersion: 'gateway.networking.k8s.io/v1', kind: 'HTTPRoute', metadata: { name: 'r', namespace: 'default' }, spec: { parentRefs: [{ name: 'gw' }], rules } })
      + Object.entries(RULES).map(([rule, backend]) => doc({
        apiVersion: 'switchboard.dev/v1alpha1', kind: 'ProxyPolicy', metadata: { name: rule, namespace: 'default' },
        spec: { targetRefs: [{ group: 'gateway.networking.k8s.io', kind: 'HTTPRoute', name: 'r', sectionName: rule }], backend },
      })).join(''));
    assert.deepEqual(gw.applyErrors, []);
  });
  after(async () => {
    await gw?.close();
    await echo?.close();
    await proxy?.close();
    await new Promise((resolve) => secure?.close(resolve));
  });

  it('originates TLS inside the tunnel', async () => {
    const res = await gw.request(80, { path: '/tunneled-tls' });
    assert.equal(res.status, 200, res.text);
    assert.deepEqual(JSON.parse(res.text), { servername: 'tunneled.test' });
    assert.ok(proxy.targets.includes(`127.0.0.1:${(secure.address() as AddressInfo).port}`));
  });

  it('reaches the endpoint through the HTTP CONNECT tunnel', async () => {
    const res = await gw.request(80, { path: '/tunneled' });
    assert.equal(res.status, 200, res.text);
    assert.equal(res.echo().path, '/tunneled');
    assert.ok(proxy.targets.includes(`127.0.0.1:${echo.port}`));
  });

  const cases = [
    { name: 'HTTP2 on plaintext speaks h2c to the endpoint', path: '/h2c', status: 200, protocol: 'HTTP/2' },
    { name: 'HTTP1 stays on HTTP/1.1', path: '/h1', status: 200, protocol: 'HTTP/1.1' },
    { name: 'requestTimeout answers 504 when the upstream is slower', path: '/deadline?delay=4000', status: 504 },
    { name: 'requestTimeout lets a fast answer through', path: '/deadline', status: 200, protocol: 'HTTP/1.1' },
  ];
  for (const c of cases) {
    it(c.name, async () => {
      const res = await gw.request(80, { path: c.path });
      assert.equal(res.status, c.status, res.text);
      if (c.protocol) assert.equal(res.echo().protocol, c.protocol);
    });
  }
});
