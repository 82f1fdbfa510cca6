/**
 * External services named by `backendRef` (issue 17 item 5), through YAML and a listening gateway:
 *   - extAuth over HTTP and over gRPC at a Service with two ready endpoints: both receive checks;
 *     a new config version whose EndpointSlice drops one endpoint stops sending to it, no restart;
 *   - a TLS-only auth service: reached over TLS when a ProxyPolicy `backend.tls` targets its
 *     Service (CA from a ConfigMap, SNI), refused (FailClosed 403) without one;
 *   - a backend `tunnel` given as backendRef (an HTTP CONNECT proxy double as a Service);
 *   - an `oauthTokenExchange` token endpoint given as backendRef.
 */
import assert from 'node:assert/strict';
import { create } from '@bufbuild/protobuf';
import { createServer as createHttpServer, type Server } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { Registry } from 'prom-client';
import { parseAllDocuments } from 'yaml';
import { stringify } from 'yaml';
import type { KubeObject } from '../../src/api/gateway/object.ts';
import { silentLogger } from '../../src/common/logger.ts';
import { translate } from '../../src/controller/translate/index.ts';
import { Authorization, CheckResponseSchema } from '../../src/proxy/ext/gen/envoy/service/auth/v3/external_auth_pb.js';
import { ExternalProcessor, ProcessingResponseSchema, type ProcessingRequest, type ProcessingResponse } from '../../src/proxy/ext/gen/envoy/service/ext_proc/v3/external_processor_pb.js';
import { ProxyRuntime } from '../../src/proxy/runtime.ts';
import { startGrpcServer, type RunningServer } from '../ext/servers.ts';
import { createCertificate } from '../support/certs.ts';
import { sendRequest, type TestResponse } from '../support/client.ts';
import { startConnectProxy, type ConnectProxy } from '../support/connect-proxy.ts';
import { startEchoServer, type EchoServer } from '../support/echo-server.ts';
import { gateway, gatewayClass, service } from '../support/manifests.ts';

const doc = (o: unknown) => `---\n${stringify(o)}`;
const authCert = await createCertificate(['authz.test']);
const proxyCert = await createCertificate(['proxy.test']);

interface Counted { readonly port: number; hits: number; close(): Promise<void> }

/** A Service whose port has one EndpointSlice per upstream port (all on 127.0.0.1): one ready endpoint each. */
function multiEndpointService(name: string, port: number, upstreamPorts: readonly number[]): string {
  return doc({ apiVersion: 'v1', kind: 'Service', metadata: { name, namespace: 'default' }, spec: { ports: [{ name: 'http', port, protocol: 'TCP' }] } })
    + upstreamPorts.map((p, i) => doc({
      apiVersion: 'discovery.k8s.io/v1', kind: 'EndpointSlice',
      metadata: { name: `${name}-slice-${i}`, namespace: 'default', labels: { 'kubernetes.io/service-name': name } },
      addressType: 'IPv4', ports: [{ name: 'http', port: p, protocol: 'TCP' }], endpoints: [{ addresses: ['127.0.0.1'], conditions: { ready: true } }],
    })).join('');
}

function listen(server: Server | ReturnType<typeof createHttpsServer>): Promise<number> {
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve((server.address() as AddressInfo).port)));
}

/** An HTTP auth service that allows every request and counts them. */
async function startAuthService(tls = false): Promise<Counted> {
  const handler = (_req: unknown, res: { writeHead(s: number): { end(b?: string): void } }) => {
    counted.hits++;
    res.writeHead(200).end();
  };
  const server = tls ? createHttpsServer({ cert: authCert.certPem, key: authCert.keyPem }, handler) : createHttpServer(handler);
  const counted: Counted = { port: await listen(server), hits: 0, close: () => new Promise((resolve) => { server.closeAllConnections(); server.close(() => resolve()); }) };
  return counted;
}

/** An Envoy ext_authz gRPC server that allows every check and counts them. */
async function startGrpcAuthz(): Promise<RunningServer & { hits: number }> {
  const state = { hits: 0 };
  const server = await startGrpcServer((router) => router.service(Authorization, {
    check() {
      state.hits++;
      return create(CheckResponseSchema, { status: { code: 0 }, httpResponse: { case: 'okResponse', value: {} } });
    },
  }));
  // A getter (Object.assign would copy the count once).
  return Object.defineProperty(server, 'hits', { get: () => state.hits }) as unknown as RunningServer & { hits: number };
}

/** An Envoy ext_proc server that passes every phase unchanged and counts its streams (one per request). */
async function startExtProc(): Promise<RunningServer & { hits: number }> {
  const state = { hits: 0 };
  const server = await startGrpcServer((router) => router.service(ExternalProcessor, {
    async *process(requests: AsyncIterable<ProcessingRequest>): AsyncIterable<ProcessingResponse> {
      state.hits++;
      for await (const req of requests) {
        const phase = req.request.case;
        if (phase === 'requestHeaders' || phase === 'responseHeaders') yield create(ProcessingResponseSchema, { response: { case: phase, value: {} } });
        else if (phase === 'requestTrailers' || phase === 'responseTrailers') yield create(ProcessingResponseSchema, { response: { case: phase, value: {} } });
      }
    },
  }));
  return Object.defineProperty(server, 'hits', { get: () => state.hits }) as unknown as RunningServer & { hits: number };
}

/** An RFC 8693 token endpoint: answers `exchanged-<subject_token>`. */
async function startTokenEndpoint(): Promise<Counted> {
  const server = createHttpServer((req, res) => {
    let body = '';
    req.setEncoding('utf8').on('data', (c: string) => (body += c)).on('end', () => {
      counted.hits++;
      const form = new URLSearchParams(body);
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ access_token: `exchanged-${form.get('subject_token') ?? ''}`, token_type: 'Bearer', expires_in: 60 }));
    });
  });
  const counted: Counted = { port: await listen(server), hits: 0, close: () => new Promise((resolve) => { server.closeAllConnections(); server.close(() => resolve()); }) };
  return counted;
}

const ROUTES = ['balanced', 'grpc', 'extproc', 'tls', 'tls-no-policy', 'tunnel', 'tunnel-tls', 'exchange'] as const;

describe('external services named by backendRef: balanced, TLS by the Service policy, re-resolved; tunnel and token endpoint as backendRef', () => {
  let echo: EchoServer;
  let authA: Counted;
  let authB: Counted;
  let grpcA: RunningServer & { hits: number };
  let grpcB: RunningServer & { hits: number };
  let procA: RunningServer & { hits: number };
  let procB: RunningServer & { hits: number };
  let tlsAuth: Counted;
  let proxy: ConnectProxy;
  let tlsProxy: ConnectProxy;
  let tokens: Counted;
  let runtime: ProxyRuntime;

  /** The manifests, with the `authz` Service's endpoints given (the EndpointSlices change between versions). */
  const manifests = (authzPorts: readonly number[]): KubeObject[] => {
    const policy = (name: string, spec: Record<string, unknown>) => doc({ apiVersion: 'switchboard.dev/v1alpha1', kind: 'ProxyPolicy', metadata: { name, namespace: 'default' }, spec });
    const onRule = (rule: string) => [{ group: 'gateway.networking.k8s.io', kind: 'HTTPRoute', name: 'r', sectionName: rule }];
    const yaml = gatewayClass() + gateway('gw', [{ name: 'http', port: 80 }]) + service('echo', echo)
      + multiEndpointService('authz', 9000, authzPorts)
      + multiEndpointService('grpc-authz', 9001, [grpcA.port, grpcB.port])
      + multiEndpointService('ext-proc', 9002, [procA.port, procB.port])
      + multiEndpointService('tls-authz', 9443, [tlsAuth.port])
      + multiEndpointService('tls-authz-plain', 9444, [tlsAuth.port])
      + multiEndpointService('egress-proxy', 3128, [Number(new URL(proxy.url).port)])
      + multiEndpointService('tokens', 8443, [tokens.port])
      + multiEndpointService('tls-proxy', 3129, [tlsProxy.port])
      + doc({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'proxy-ca', namespace: 'default' }, data: { 'ca.crt': proxyCert.certPem } })
      + doc({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'authz-ca', namespace: 'default' }, data: { 'ca.crt': authCert.certPem } })
      + doc({
        apiVersion: 'gateway.networking.k8s.io/v1', kind: 'HTTPRoute', metadata: { name: 'r', namespace: 'default' },
        spec: { parentRefs: [{ name: 'gw' }], rules: ROUTES.map((name) => ({ name, matches: [{ path: { type: 'PathPrefix', value: `/${name}` } }], backendRefs: [{ name: 'echo', port: 8080 }] })) },
      })
      + policy('balanced', { targetRefs: onRule('balanced'), traffic: { extAuth: { backendRef: { name: 'authz', port: 9000 }, http: {} } } })
      + policy('grpc', { targetRefs: onRule('grpc'), traffic: { extAuth: { backendRef: { name: 'grpc-authz', port: 9001 }, grpc: {} } } })
      + policy('extproc', { targetRefs: onRule('extproc'), traffic: { extProc: { backendRef: { name: 'ext-proc', port: 9002 }, processingOptions: { requestBodyMode: 'None', responseBodyMode: 'None' } } } })
      + policy('tls', { targetRefs: onRule('tls'), traffic: { extAuth: { backendRef: { name: 'tls-authz', port: 9443 }, http: {} } } })
      + policy('tls-no-policy', { targetRefs: onRule('tls-no-policy'), traffic: { extAuth: { backendRef: { name: 'tls-authz-plain', port: 9444 }, http: {} } } })
      // The auth service's own backend policy: TLS with the test CA and the name its certificate carries.
      + policy('authz-tls', { targetRefs: [{ group: '', kind: 'Service', name: 'tls-authz' }], backend: { tls: { caCertificateRefs: [{ name: 'authz-ca' }], sni: 'authz.test' } } })
      + policy('tunnel', { targetRefs: onRule('tunnel'), backend: { tunnel: { backendRef: { name: 'egress-proxy', port: 3128 } } } })
      + policy('tunnel-tls', { targetRefs: onRule('tunnel-tls'), backend: { tunnel: { backendRef: { name: 'tls-proxy', port: 3129 } } } })
      // The proxy Service's own backend policy: the CONNECT proxy is spoken to over TLS.
      + policy('proxy-tls', { targetRefs: [{ group: '', kind: 'Service', name: 'tls-proxy' }], backend: { tls: { caCertificateRefs: [{ name: 'proxy-ca' }], sni: 'proxy.test' } } })
      + policy('exchange', {
        targetRefs: onRule('exchange'),
        backend: { auth: { oauthTokenExchange: { backendRef: { name: 'tokens', port: 8443 }, path: '/oauth/token', clientAuth: { clientId: 'gateway', method: 'ClientSecretPost' } } } },
      });
    return parseAllDocuments(yaml).map((d) => d.toJS() as KubeObject).filter(Boolean);
  };

  const apply = async (authzPorts: readonly number[]) => {
    const { config } = translate(manifests(authzPorts));
    const applied = await runtime.apply(config);
    assert.deepEqual(applied.errors, []);
  };
  const get = (path: string, headers: Record<string, string> = {}): Promise<TestResponse> => {
    const port = runtime.portOf(80);
    if (port === undefined) throw new Error('no listener for port 80');
    return sendRequest(port, { path, headers });
  };

  before(async () => {
    echo = await startEchoServer('echo');
    [authA, authB, tlsAuth, tokens] = await Promise.all([startAuthService(), startAuthService(), startAuthService(true), startTokenEndpoint()]);
    [grpcA, grpcB] = await Promise.all([startGrpcAuthz(), startGrpcAuthz()]);
    [procA, procB] = await Promise.all([startExtProc(), startExtProc()]);
    proxy = await startConnectProxy();
    // An HTTP CONNECT proxy spoken to over TLS (certificate for proxy.test).
    tlsProxy = await startConnectProxy({ tls: proxyCert });
    runtime = new ProxyRuntime({ logger: silentLogger, registry: new Registry(), bindAddress: '127.0.0.1', listenPort: () => 0 });
    await apply([authA.port, authB.port]);
  });
  after(async () => {
    await runtime?.close({ graceMs: 0 });
    await Promise.all([echo?.close(), authA?.close(), authB?.close(), tlsAuth?.close(), tokens?.close(), grpcA?.close(), grpcB?.close(), procA?.close(), procB?.close(), proxy?.close(), tlsProxy?.close()]);
  });

  it('extAuth over HTTP: checks are spread over both ready endpoints of the Service', async () => {
    for (let i = 0; i < 6; i++) assert.equal((await get('/balanced')).status, 200);
    assert.equal(authA.hits, 3);
    assert.equal(authB.hits, 3);
  });

  it('extAuth over gRPC: calls are spread over both ready endpoints of the Service', async () => {
    for (let i = 0; i < 6; i++) assert.equal((await get('/grpc')).status, 200);
    assert.equal(grpcA.hits, 3);
    assert.equal(grpcB.hits, 3);
  });

  it('extProc: each request\'s stream goes to the next ready endpoint of the Service', async () => {
    for (let i = 0; i < 4; i++) assert.equal((await get('/extproc')).status, 200);
    assert.equal(procA.hits, 2);
    assert.equal(procB.hits, 2);
  });

  it('a TLS-only auth service is reached over TLS when its Service\'s backend policy asks; without one the check fails closed', async () => {
    const before = tlsAuth.hits;
    const res = await get('/tls');
    assert.equal(res.status, 200, res.text);
    assert.equal(tlsAuth.hits, before + 1);
    assert.equal((await get('/tls-no-policy')).status, 403);
    assert.equal(tlsAuth.hits, before + 1, 'plaintext to a TLS server is no answer');
  });

  it('a backend tunnel given as backendRef: the upstream is reached through the CONNECT proxy Service', async () => {
    const before = proxy.targets.length;
    const res = await get('/tunnel');
    assert.equal(res.status, 200);
    assert.equal(res.echo().path, '/tunnel');
    assert.deepEqual(proxy.targets.slice(before), [`127.0.0.1:${echo.port}`]);
  });

  it('a tunnel Service whose backend policy sets tls: the CONNECT proxy is spoken to over TLS', async () => {
    const res = await get('/tunnel-tls');
    assert.equal(res.status, 200, res.text);
    assert.equal(res.echo().path, '/tunnel-tls');
    assert.deepEqual(tlsProxy.targets, [`127.0.0.1:${echo.port}`]);
  });

  it('an oauthTokenExchange token endpoint given as backendRef: the upstream gets the exchanged token', async () => {
    const res = await get('/exchange', { authorization: 'Bearer alice' });
    assert.equal(res.status, 200, res.text);
    assert.equal(res.echo().headers.authorization, 'Bearer exchanged-alice');
    assert.equal(tokens.hits, 1);
  });

  it('a new config version whose EndpointSlices drop an endpoint stops sending to it (no restart)', async () => {
    await apply([authA.port]);
    const a = authA.hits;
    const b = authB.hits;
    for (let i = 0; i < 4; i++) assert.equal((await get('/balanced')).status, 200);
    assert.equal(authA.hits, a + 4);
    assert.equal(authB.hits, b, 'the removed endpoint receives nothing');
  });
});
