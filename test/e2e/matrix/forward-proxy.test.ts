/**
 * Member × kind matrix, the `forwardProxy` kind (ProxyBackend `spec.dynamicForwardProxy`): every
 * backend member on routes to one forward proxy backend, driven as curl drives a proxy (node's
 * http client sending absolute-form targets). Each variant gets an HTTPRoute `<variant>-fp` matching
 * the destination path prefix `/<variant>/` and a ProxyPolicy of the same name with the member.
 * Members that apply are observed at the destination (a recording double); the two that do not
 * (`http.version: HTTP2`, `health`) are asserted reported in the policy status, with the request
 * still served.
 */
import assert from 'node:assert/strict';
import { once } from 'node:events';
import http from 'node:http';
import { after, before, describe, it } from 'node:test';
import { stringify } from 'yaml';
import type { RunningServer } from '../../ext/servers.ts';
import { createCertificate } from '../../support/certs.ts';
import { startConnectProxy, type ConnectProxy } from '../../support/connect-proxy.ts';
import { startGateway, type GatewayHarness } from '../../support/gateway.ts';
import { httpGateway } from '../../support/manifests.ts';
import { startAuthz } from './authz-double.ts';
import { startProvider, type RecordingServer } from './doubles.ts';
import { acceptedOf, assertAccepted, header, last, nothingReaches, secret } from './support.ts';

const doc = (o: unknown): string => `---\n${stringify(o)}`;

interface FpVariant {
  readonly name: string;
  readonly backend: Record<string, unknown>;
}

function manifests(variants: readonly FpVariant[]): string {
  let out = httpGateway() + secret('backend-key', { Authorization: 'Bearer sk-secret' }) + doc({
    apiVersion: 'switchboard.dev/v1alpha1', kind: 'ProxyBackend', metadata: { name: 'egress', namespace: 'default' },
    spec: { dynamicForwardProxy: { accessControl: { allowedHosts: ['127.0.0.1', 'localhost'], allowAddressClasses: ['loopback'] } } },
  });
  for (const v of variants) {
    const name = `${v.name}-fp`;
    out += doc({
      apiVersion: 'gateway.networking.k8s.io/v1', kind: 'HTTPRoute', metadata: { name, namespace: 'default' },
      spec: { parentRefs: [{ name: 'gw' }], rules: [{ matches: [{ path: { type: 'PathPrefix', value: `/${v.name}/` } }], backendRefs: [{ group: 'switchboard.dev', kind: 'ProxyBackend', name: 'egress' }] }] },
    });
    out += doc({
      apiVersion: 'switchboard.dev/v1alpha1', kind: 'ProxyPolicy', metadata: { name, namespace: 'default' },
      spec: { targetRefs: [{ group: 'gateway.networking.k8s.io', kind: 'HTTPRoute', name }], backend: v.backend },
    });
  }
  return out;
}

describe('member × kind matrix: the forwardProxy kind (backend members)', () => {
  let plain: RecordingServer;
  let secure: RecordingServer;
  let tunnel: ConnectProxy;
  let authz: RunningServer;
  let gw: GatewayHarness;
  let caPem: string;

  /** An absolute-form request through the gateway to `http://<host>:<port><path>`. */
  async function via(destination: { host: string; port: number }, path: string, init: { headers?: Record<string, string>; body?: string } = {}): Promise<{ status: number; body: string }> {
    const authority = `${destination.host}:${destination.port}`;
    const req = http.request({
      host: '127.0.0.1', port: gw.portOf(80), method: init.body === undefined ? 'GET' : 'POST', path: `http://${authority}${path}`,
      headers: { ...init.headers, host: authority, ...(init.body === undefined ? {} : { 'content-type': 'application/json' }) },
    });
    req.end(init.body);
    const [res] = (await once(req, 'response')) as [http.IncomingMessage];
    let body = '';
    for await (const chunk of res) body += String(chunk);
    return { status: res.statusCode ?? 0, body };
  }
  const toPlain = (path: string, init?: Parameters<typeof via>[2]) => via({ host: '127.0.0.1', port: plain.port }, path, init);

  before(async () => {
    const cert = await createCertificate(['localhost']);
    caPem = cert.certPem;
    [plain, secure, tunnel, authz] = await Promise.all([startProvider(), startProvider(cert), startConnectProxy(), startAuthz()]);
    const variants: FpVariant[] = [
      { name: 'tcp', backend: { tcp: { connectTimeout: '2s', keepalive: { time: '30s' } } } },
      { name: 'tls', backend: { tls: { caCertificateRefs: [{ name: 'fp-ca' }] } } },
      { name: 'http', backend: { http: { requestTimeout: '300ms' } } },
      { name: 'h2', backend: { http: { version: 'HTTP2' } } },
      { name: 'tunnel', backend: { tunnel: { url: tunnel.url } } },
      { name: 'auth-key', backend: { auth: { key: 'sk-route' } } },
      { name: 'auth-secret', backend: { auth: { secretRef: { name: 'backend-key' } } } },
      { name: 'transformation', backend: { transformation: { request: { set: [{ name: 'x-btx', value: '"on"' }] } } } },
      { name: 'health', backend: { health: { unhealthyCondition: 'response.code >= 500' } } },
      { name: 'extauth', backend: { extAuth: { url: authz.url, grpc: {} } } },
    ];
    gw = await startGateway(manifests(variants) + doc({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'fp-ca', namespace: 'default' }, data: { 'ca.crt': caPem } }));
    assert.deepEqual(gw.applyErrors, []);
  });
  after(async () => {
    await gw?.close();
    await Promise.all([plain?.stop(), secure?.stop(), tunnel?.close(), authz?.close()]);
  });

  it('tcp × forwardProxy: accepted and applied (connect deadline, keepalive); the request is served', async () => {
    assertAccepted(gw, 'tcp-fp');
    assert.equal((await toPlain('/tcp/x')).status, 200);
    assert.equal(last(plain).path, '/tcp/x');
  });

  it('tls × forwardProxy: TLS originated to the destination with the policy CA, the asked-for name verified', async () => {
    assertAccepted(gw, 'tls-fp');
    const got = await via({ host: 'localhost', port: secure.port }, '/tls/x');
    assert.equal(got.status, 200, got.body);
    assert.equal(last(secure).path, '/tls/x');
  });

  it('http × forwardProxy: requestTimeout answers 504 when the destination is slower', async () => {
    assertAccepted(gw, 'http-fp');
    const got = await toPlain('/http/v1/chat/completions', { body: JSON.stringify({ model: 'slow', messages: [] }) });
    assert.equal(got.status, 504, got.body);
  });

  it('http.version HTTP2 × forwardProxy: reported not applied (HTTP/1.1 to every destination); the request is served', async () => {
    const accepted = acceptedOf(gw, 'h2-fp');
    assert.deepEqual([accepted.status, accepted.reason], ['False', 'Unsupported']);
    assert.match(accepted.message, /spec\.backend\.http\.version \(on forwardProxy backends\)/);
    assert.equal((await toPlain('/h2/x')).status, 200);
  });

  it('tunnel × forwardProxy: the destination is reached through the upstream CONNECT proxy, at the checked address', async () => {
    assertAccepted(gw, 'tunnel-fp');
    assert.equal((await via({ host: 'localhost', port: plain.port }, '/tunnel/x')).status, 200);
    assert.ok(tunnel.targets.includes(`127.0.0.1:${plain.port}`), tunnel.targets.join(' '));
  });

  it('auth × forwardProxy: key and secretRef replace the client credential', async () => {
    await toPlain('/auth-key/x', { headers: { authorization: 'Bearer client' } });
    assert.equal(header(last(plain).headers, 'authorization'), 'Bearer sk-route');
    await toPlain('/auth-secret/x', { headers: { authorization: 'Bearer client' } });
    assert.equal(header(last(plain).headers, 'authorization'), 'Bearer sk-secret');
  });

  it('transformation × forwardProxy: the backend transformation sets a request header', async () => {
    await toPlain('/transformation/x');
    assert.equal(header(last(plain).headers, 'x-btx'), 'on');
  });

  it('health × forwardProxy: reported not applied (no endpoint set to evict from); the request is served', async () => {
    const accepted = acceptedOf(gw, 'health-fp');
    assert.equal(accepted.status, 'False');
    assert.match(accepted.message, /spec\.backend\.health \(on forwardProxy backends\)/);
    assert.equal((await toPlain('/health/x')).status, 200);
  });

  it('extAuth × forwardProxy: allowed with the service header added, denied 401 with nothing sent', async () => {
    await toPlain('/extauth/x', { headers: { 'x-user': 'alice' } });
    assert.equal(header(last(plain).headers, 'x-backend-auth'), 'alice');
    assert.equal((await nothingReaches(plain, () => toPlain('/extauth/x', { headers: { 'x-user': 'mallory' } }))).status, 401);
  });
});
