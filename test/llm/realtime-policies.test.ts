/**
 * Realtime (WebSocket) upgrades to an `ai` backend get what an ordinary AI request gets from the
 * policies before the provider: the request headers route filters and traffic policies set or
 * remove, the header changes a backend extAuth makes (and its refusal, with nothing sent), the
 * client's Host with `hostRewrite: None`, and backend TLS (CA from a ConfigMap, SNI) on the
 * provider's handshake. Driven by a real `ws` client against a WebSocket provider double.
 */
import assert from 'node:assert/strict';
import type { IncomingHttpHeaders } from 'node:http';
import { after, before, describe, it } from 'node:test';
import { create } from '@bufbuild/protobuf';
import WebSocket from 'ws';
import { HeaderValueOption_HeaderAppendAction } from '../../src/proxy/ext/gen/envoy/config/core/v3/base_pb.js';
import { Authorization, CheckResponseSchema } from '../../src/proxy/ext/gen/envoy/service/auth/v3/external_auth_pb.js';
import { StatusCode } from '../../src/proxy/ext/gen/envoy/type/v3/http_status_pb.js';
import { startGrpcServer, type RunningServer } from '../ext/servers.ts';
import { createCertificate } from '../support/certs.ts';
import { startConnectProxy, type ConnectProxy } from '../support/connect-proxy.ts';
import { startGateway, type GatewayHarness } from '../support/gateway.ts';
import { httpGateway } from '../support/manifests.ts';
import { startMockRealtime, type MockRealtime } from './mock-realtime.ts';

const PROVIDER_CERT = await createCertificate(['provider.test']);
const ROUTES = '{ /v1/realtime: Realtime }';
const PATH = '/v1/realtime?model=gpt-realtime';

/** ext_authz: `x-user: mallory` is denied 401; everyone else is allowed with `x-backend-auth: <user>` upstream. */
function startAuthz(): Promise<RunningServer> {
  return startGrpcServer((router) => router.service(Authorization, {
    check(req) {
      const user = req.attributes?.request?.http?.headers['x-user'] ?? '';
      if (user === 'mallory') return create(CheckResponseSchema, { status: { code: 7 }, httpResponse: { case: 'deniedResponse', value: { status: { code: StatusCode.Unauthorized }, body: 'not you' } } });
      const header = { header: { key: 'x-backend-auth', value: user }, appendAction: HeaderValueOption_HeaderAppendAction.OVERWRITE_IF_EXISTS_OR_ADD };
      return create(CheckResponseSchema, { status: { code: 0 }, httpResponse: { case: 'okResponse', value: { headers: [header] } } });
    },
  }));
}

type Upgrade = { readonly kind: 'open'; readonly first: string } | { readonly kind: 'refused'; readonly status: number; readonly body: string };

/** Opens a WebSocket through the gateway: the provider's first message, or the refusal as it came. */
function upgrade(url: string, headers: Record<string, string> = {}): Promise<Upgrade> {
  const ws = new WebSocket(url, ['realtime'], { headers });
  return new Promise<Upgrade>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('no answer within 5 s')), 5000);
    ws.once('unexpected-response', (_req, res) => {
      let body = '';
      res.on('data', (c: Buffer) => (body += c.toString()));
      res.on('end', () => {
        clearTimeout(timer);
        resolve({ kind: 'refused', status: res.statusCode ?? 0, body });
      });
    });
    ws.once('message', (data) => {
      clearTimeout(timer);
      resolve({ kind: 'open', first: String(data) });
    });
    ws.once('error', (err) => {
      clearTimeout(timer);
      reject(err);
    });
  }).finally(() => ws.terminate());
}

function opened(u: Upgrade): void {
  assert.equal(u.kind, 'open', u.kind === 'refused' ? `refused: ${u.status} ${u.body}` : '');
  assert.match((u as { first: string }).first, /session\.created/);
}

describe('Realtime upgrades: policy headers, backend extAuth, hostRewrite and backend TLS reach the provider handshake', () => {
  let plain: MockRealtime;
  let secure: MockRealtime;
  let authz: RunningServer;
  let tunnel: ConnectProxy;
  let gw: GatewayHarness;

  const routeTo = (name: string) => `---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: { name: ${name} }
spec:
  parentRefs: [{ name: gw }]
  rules: [{ matches: [{ path: { type: PathPrefix, value: /${name} } }], backendRefs: [{ group: switchboard.dev, kind: ProxyBackend, name: ${name} }] }]
`;
  const backend = (name: string, at: MockRealtime, policies = '') => `${routeTo(name)}---
apiVersion: switchboard.dev/v1alpha1
kind: ProxyBackend
metadata: { name: ${name} }
spec:
  ai: { provider: { providerA: {}, host: ${at.host}, port: ${at.port} } }
  policies: { auth: { key: sk-provider }, ai: { routes: ${ROUTES} }${policies ? `, ${policies}` : ''} }
`;
  const traffic = (name: string, spec: string) => `---
apiVersion: switchboard.dev/v1alpha1
kind: ProxyPolicy
metadata: { name: ${name}-traffic }
spec:
  targetRefs: [{ group: gateway.networking.k8s.io, kind: HTTPRoute, name: ${name} }]
  traffic: ${spec}
`;

  before(async () => {
    const accept = (h: IncomingHttpHeaders) => h.authorization === 'Bearer sk-provider';
    [plain, secure, authz, tunnel] = await Promise.all([startMockRealtime(accept), startMockRealtime(accept, PROVIDER_CERT), startAuthz(), startConnectProxy()]);
    gw = await startGateway(httpGateway()
      + backend('headers', plain) + traffic('headers', '{ headerModifiers: { request: { set: [{ name: x-team, value: red }], remove: [user-agent] } } }')
      + backend('authz', plain, `extAuth: { url: "${authz.url}", grpc: {} }`)
      + backend('hostnone', plain) + traffic('hostnone', '{ hostRewrite: { mode: None } }')
      // The provider is dialled by address and its certificate names provider.test: the policy's SNI and CA make it work.
      + backend('tls', secure, 'tls: { caCertificateRefs: [{ name: provider-ca }], sni: provider.test }')
      + backend('tunnel', secure, `tls: { caCertificateRefs: [{ name: provider-ca }], sni: provider.test }, tunnel: { url: "${tunnel.url}" }`)
      + `---
apiVersion: v1
kind: ConfigMap
metadata: { name: provider-ca }
data: { ca.crt: ${JSON.stringify(PROVIDER_CERT.certPem)} }
`);
    assert.deepEqual(gw.applyErrors, []);
  });
  after(async () => {
    await gw?.close();
    await Promise.all([plain?.stop(), secure?.stop(), authz?.close(), tunnel?.close()]);
  });

  const url = (prefix: string) => `ws://127.0.0.1:${gw.portOf(80)}/${prefix}${PATH}`;

  it('headers a traffic policy sets reach the handshake, headers it removes do not; the backend key replaces the client\'s', async () => {
    opened(await upgrade(url('headers'), { 'user-agent': 'client-ua/1', authorization: 'Bearer sk-client' }));
    const hs = plain.handshakes.at(-1)!;
    assert.equal(hs.headers['x-team'], 'red');
    assert.equal(hs.headers['user-agent'], undefined, 'removed by the policy');
    assert.equal(hs.headers.authorization, 'Bearer sk-provider');
  });

  it('without a policy the forwarded client header passes (the control for the row above)', async () => {
    opened(await upgrade(url('authz'), { 'user-agent': 'client-ua/1', 'x-user': 'alice' }));
    assert.equal(plain.handshakes.at(-1)!.headers['user-agent'], 'client-ua/1');
  });

  it('backend extAuth: the header it adds reaches the handshake', async () => {
    opened(await upgrade(url('authz'), { 'x-user': 'alice' }));
    assert.equal(plain.handshakes.at(-1)!.headers['x-backend-auth'], 'alice');
  });

  it('backend extAuth: a denial is the upgrade\'s answer and the provider sees no handshake', async () => {
    const before = plain.handshakes.length;
    const u = await upgrade(url('authz'), { 'x-user': 'mallory' });
    assert.equal(u.kind, 'refused');
    assert.equal((u as { status: number }).status, 401);
    assert.equal(plain.handshakes.length, before);
  });

  it('hostRewrite None: the provider handshake carries the client\'s Host', async () => {
    opened(await upgrade(url('hostnone'), { host: 'client.example' }));
    assert.equal(plain.handshakes.at(-1)!.headers.host, 'client.example');
  });

  it('without hostRewrite the provider\'s own Host is sent', async () => {
    opened(await upgrade(url('headers'), { host: 'client.example' }));
    assert.equal(plain.handshakes.at(-1)!.headers.host, `${plain.host}:${plain.port}`);
  });

  it('backend TLS: the provider is reached over wss with the policy\'s CA and SNI', async () => {
    const before = secure.handshakes.length;
    opened(await upgrade(url('tls')));
    assert.equal(secure.handshakes.length, before + 1);
    assert.equal(secure.handshakes.at(-1)!.headers.authorization, 'Bearer sk-provider');
  });

  it('backend tunnel: the provider handshake goes through the CONNECT proxy, TLS inside it', async () => {
    const before = secure.handshakes.length;
    opened(await upgrade(url('tunnel')));
    assert.equal(tunnel.targets.at(-1), `${secure.host}:${secure.port}`);
    assert.equal(secure.handshakes.length, before + 1);
  });
});
