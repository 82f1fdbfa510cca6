/**
 * Backend policy tls + http through YAML: TLS origination to a real HTTPS upstream that demands a
 * client certificate (mTLS), with the CA from a ConfigMap, SNI and SAN checks, insecureSkipVerify,
 * and HTTP/2 by version. The upstream reports the SNI, ALPN, protocol and client certificate it saw.
 */
import assert from 'node:assert/strict';
import { createSecureServer, type Http2SecureServer } from 'node:http2';
import type { AddressInfo } from 'node:net';
import type { TLSSocket } from 'node:tls';
import { after, before, describe, it } from 'node:test';
import { stringify } from 'yaml';
import { createCertificate } from '../support/certs.ts';
import { startGateway, type GatewayHarness } from '../support/gateway.ts';
import { gateway, gatewayClass, service, tlsSecret } from '../support/manifests.ts';

const serverCert = await createCertificate(['upstream.test']);
const clientCert = await createCertificate(['gateway-client.test']);

interface TlsEcho { servername: string | false; alpn: string | false | null; httpVersion: string; clientCN: string | undefined }

function startTlsUpstream(): Promise<Http2SecureServer> {
  const server = createSecureServer({
    allowHTTP1: true,
    cert: serverCert.certPem,
    key: serverCert.keyPem,
    ca: clientCert.certPem,
    requestCert: true,
    rejectUnauthorized: true,
  }, (req, res) => {
    const socket = req.socket as TLSSocket;
    const echo: TlsEcho = {
      servername: (socket as TLSSocket & { servername: string | false }).servername,
      alpn: socket.alpnProtocol,
      httpVersion: req.httpVersion,
      clientCN: (socket.getPeerCertificate().subject as { CN?: string } | undefined)?.CN,
    };
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(echo));
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(server)));
}

const doc = (o: unknown) => `---\n${stringify(o)}`;
const rulePolicy = (rule: string, tls: Record<string, unknown>, extra: Record<string, unknown> = {}) => doc({
  apiVersion: 'switchboard.dev/v1alpha1',
  kind: 'ProxyPolicy',
  metadata: { name: `tls-${rule}`, namespace: 'default' },
  spec: { targetRefs: [{ group: 'gateway.networking.k8s.io', kind: 'HTTPRoute', name: 'r', sectionName: rule }], backend: { tls, ...extra } },
});
const mtls = { mtlsCertificateRef: [{ name: 'client-cert' }], caCertificateRefs: [{ name: 'upstream-ca' }] };
const RULES = {
  mtls: { ...mtls, sni: 'upstream.test' },
  h2: { ...mtls, sni: 'upstream.test' },
  'wrong-san': { ...mtls, sni: 'upstream.test', verifySubjectAltNames: ['other.test'] },
  'skip-hostname': { ...mtls, sni: 'wrong.test', insecureSkipVerify: 'Hostname' },
  'system-cas': { mtlsCertificateRef: [{ name: 'client-cert' }], sni: 'upstream.test' },
  'no-client-cert': { caCertificateRefs: [{ name: 'upstream-ca' }], sni: 'upstream.test' },
} as const;

describe('backend policy: TLS origination', () => {
  let upstream: Http2SecureServer;
  let gw: GatewayHarness;

  before(async () => {
    upstream = await startTlsUpstream();
    const { port } = upstream.address() as AddressInfo;
    const rules = Object.keys(RULES).map((name) => ({ name, matches: [{ path: { type: 'PathPrefix', value: `/${name}` } }], backendRefs: [{ name: 'secure', port: 8443 }] }));
    gw = await startGateway(gatewayClass() + service('secure', { host: '127.0.0.1', port }, { port: 8443 }) + gateway('gw', [{ name: 'http', port: 80 }])
      + tlsSecret('client-cert', clientCert)
      + doc({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'upstream-ca', namespace: 'default' }, data: { 'ca.crt': serverCert.certPem } })
      + doc({ apiVersion: 'gateway.networking.k8s.io/v1', kind: 'HTTPRoute', metadata: { name: 'r', namespace: 'default' }, spec: { parentRefs: [{ name: 'gw' }], rules } })
      + Object.entries(RULES).map(([rule, tls]) => rulePolicy(rule, tls, rule === 'h2' ? { http: { version: 'HTTP2' } } : rule === 'mtls' ? { http: { version: 'HTTP1' } } : {})).join(''));
    assert.deepEqual(gw.applyErrors, []);
  });
  after(async () => {
    await gw?.close();
    await new Promise((resolve) => upstream?.close(resolve));
  });

  it('originates mTLS with the configured SNI and CA, HTTP/1.1 when asked', async () => {
    const res = await gw.request(80, { path: '/mtls' });
    assert.equal(res.status, 200, res.text);
    const echo = JSON.parse(res.text) as TlsEcho;
    assert.deepEqual(echo, { servername: 'upstream.test', alpn: 'http/1.1', httpVersion: '1.1', clientCN: 'gateway-client.test' });
  });

  it('speaks HTTP/2 over TLS when http.version is HTTP2', async () => {
    const res = await gw.request(80, { path: '/h2' });
    assert.equal(res.status, 200, res.text);
    const echo = JSON.parse(res.text) as TlsEcho;
    assert.equal(echo.alpn, 'h2');
    assert.equal(echo.httpVersion, '2.0');
  });

  const refused = [
    { name: 'a SAN the certificate does not carry', path: '/wrong-san' },
    { name: 'a server certificate the system CAs do not know', path: '/system-cas' },
    { name: 'no client certificate for an upstream that demands one', path: '/no-client-cert' },
  ];
  for (const c of refused) {
    it(`refuses ${c.name}`, async () => {
      const res = await gw.request(80, { path: c.path });
      assert.equal(res.status, 502, res.text);
    });
  }

  it('insecureSkipVerify Hostname trusts the CA but ignores a name mismatch', async () => {
    const res = await gw.request(80, { path: '/skip-hostname' });
    assert.equal(res.status, 200, res.text);
    assert.equal((JSON.parse(res.text) as TlsEcho).servername, 'wrong.test');
  });
});
