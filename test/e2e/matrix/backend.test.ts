/**
 * Member × kind matrix, backend members (ProxyPolicy `backend` on the route): tcp, tls, http,
 * tunnel, auth (key, secretRef, a missing Secret, passthrough), transformation, health, extAuth —
 * on a Service, an `ai` and an `mcp` backend. An invalid or unapplicable backend policy fails
 * closed on every kind: refused in the client's format, the upstream sees nothing (support.ts says
 * how the matrix is built).
 */
import assert from 'node:assert/strict';
import { after, before, describe } from 'node:test';
import { closedPort, startHttpServer, type RunningServer } from '../../ext/servers.ts';
import { createCertificate } from '../../support/certs.ts';
import { startConnectProxy, type ConnectProxy } from '../../support/connect-proxy.ts';
import { startEchoServer, type EchoServer } from '../../support/echo-server.ts';
import { startGateway, type GatewayHarness } from '../../support/gateway.ts';
import { service } from '../../support/manifests.ts';
import { startAuthz } from './authz-double.ts';
import { startMcpTarget, startProvider, type RecordingServer } from './doubles.ts';
import {
  AI_ROUTES, aiBackend, assertAccepted, assertAnthropicError, assertGatewayError, assertJsonRpcRefusal, assertOpenAIError, assertReported, Clients, failure, header, last,
  matrixYaml, mcpBackend, nothingReaches, object, perKind, runRows, secret, type Row, type Variant,
} from './support.ts';

const TLS_HOST = 'upstream.matrix.test';

describe('member × kind matrix: backend tcp, tls, http, tunnel, auth, transformation, health, extAuth', () => {
  let echo: EchoServer;
  let provider: RecordingServer;
  let target: RecordingServer;
  let tlsProvider: RecordingServer;
  let tlsTarget: RecordingServer;
  let failing: RunningServer;
  /** Requests the always-503 server got (the health rows count their own). */
  let failingHits = 0;
  let tunnel: ConnectProxy;
  let authz: RunningServer;
  let gw: GatewayHarness;
  let clients: Clients;

  before(async () => {
    const cert = await createCertificate([TLS_HOST]);
    [echo, provider, target, tlsProvider, tlsTarget, tunnel, authz] = await Promise.all([
      startEchoServer('echo'), startProvider(), startMcpTarget(), startProvider(cert), startMcpTarget(cert), startConnectProxy(), startAuthz(),
    ]);
    failing = await startHttpServer((_req, _body, res) => {
      failingHits++;
      res.writeHead(503, { 'content-type': 'text/plain' }).end('sick');
    });
    const dead = await closedPort();
    const ref = (name: string) => ({ group: 'switchboard.dev', kind: 'ProxyBackend', name });
    const tlsRefs = { svc: { name: 'secure', port: 8443 }, ai: ref('llm-tls'), mcp: ref('tools-tls') };
    const variants: Variant[] = [
      { name: 'tcp', backend: { tcp: { connectTimeout: '2s', keepalive: { time: '30s', retries: 3 } } } },
      { name: 'tls', backend: { tls: { sni: TLS_HOST, caCertificateRefs: [{ name: 'upstream-ca' }] } }, refs: tlsRefs },
      { name: 'tls-none', refs: tlsRefs },
      { name: 'http', backend: { http: { requestTimeout: '500ms' } } },
      { name: 'tunnel', backend: { tunnel: { url: tunnel.url } } },
      { name: 'auth-key', backend: { auth: { key: 'sk-route' } } },
      { name: 'auth-secret', backend: { auth: { secretRef: { name: 'backend-key' } } } },
      { name: 'auth-missing', backend: { auth: { secretRef: { name: 'no-such-secret' } } } },
      { name: 'auth-passthrough', traffic: { apiKeyAuthentication: { secretRef: { name: 'client-keys' } } }, backend: { auth: { passthrough: {} } } },
      { name: 'transformation', backend: { transformation: { request: { set: [{ name: 'x-btx', value: '"on"' }] } } } },
      // Bodies: the request's `"model":"m"` becomes `"model":"rewritten"`, the answer's `hello` is upper-cased.
      {
        name: 'transformation-body',
        backend: { transformation: { request: { body: `string(request.body).replace('"model":"m"', '"model":"rewritten"')` }, response: { body: 'string(response.body).replace("hello", "HELLO")' } } },
      },
      // The same over JSON-RPC messages (MCP): a call of `shout` becomes `whoami`, its `matrix` is upper-cased.
      {
        name: 'transformation-rpc', kinds: ['mcp'],
        backend: { transformation: { request: { body: 'string(request.body).replace("shout", "whoami")' }, response: { body: 'string(response.body).replace("matrix", "MATRIX")' } } },
      },
      { name: 'health', backend: { health: { unhealthyCondition: 'response.code >= 500', eviction: { duration: '60s' } } }, refs: { svc: { name: 'pair', port: 8080 }, ai: ref('llm-pair') } },
      { name: 'extauth', backend: { extAuth: { url: authz.url, grpc: {} } } },
      { name: 'extauth-down', backend: { extAuth: { url: `http://127.0.0.1:${dead}`, grpc: {}, failureMode: 'FailClosed' } } },
      // `ai.promptGuard` from the ProxyPolicy (the backend has no inline `ai`): a request saying `forbidden` is refused, the answer's `hello` masked.
      {
        name: 'prompt-guard', kinds: ['ai'], refs: { ai: ref('llm-plain') },
        backend: { ai: { routes: AI_ROUTES, promptGuard: { request: [{ regex: { matches: ['forbidden'], action: 'Reject' }, response: { statusCode: 400, message: 'not that' } }], response: [{ regex: { matches: ['hel+o'] } }] } } },
      },
    ];
    const extra = service('secure', { host: '127.0.0.1', port: tlsProvider.port }, { port: 8443 })
      + aiBackend('llm-tls', tlsProvider.port) + mcpBackend('tools-tls', tlsTarget.port)
      // One priority group: a provider that always answers 503 and a healthy one (the health row).
      + object({
        apiVersion: 'switchboard.dev/v1alpha1', kind: 'ProxyBackend', metadata: { name: 'llm-pair', namespace: 'default' },
        spec: {
          ai: { groups: [{ providers: [{ name: 'sick', providerA: {}, host: '127.0.0.1', port: failing.port }, { name: 'well', providerA: {}, host: '127.0.0.1', port: provider.port }] }] },
          policies: { ai: { routes: AI_ROUTES } },
        },
      })
      + object({ apiVersion: 'switchboard.dev/v1alpha1', kind: 'ProxyBackend', metadata: { name: 'llm-plain', namespace: 'default' }, spec: { ai: { provider: { providerA: {}, host: '127.0.0.1', port: provider.port } } } })
      + object({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'upstream-ca', namespace: 'default' }, data: { 'ca.crt': cert.certPem } })
      + secret('backend-key', { Authorization: 'Bearer sk-secret' }) + secret('client-keys', { team: 'sk-good' })
      + object({ apiVersion: 'v1', kind: 'Service', metadata: { name: 'pair', namespace: 'default' }, spec: { ports: [{ name: 'http', port: 8080 }] } })
      + [echo.port, failing.port].map((port, i) => object({
        apiVersion: 'discovery.k8s.io/v1', kind: 'EndpointSlice', addressType: 'IPv4',
        metadata: { name: `pair-${i}`, namespace: 'default', labels: { 'kubernetes.io/service-name': 'pair' } },
        ports: [{ name: 'http', port, protocol: 'TCP' }],
        endpoints: [{ addresses: ['127.0.0.1'], conditions: { ready: true } }],
      })).join('');
    gw = await startGateway(matrixYaml({ echo, provider, target }, variants, extra));
    // What the runtime could not compile is each row's business (the extAuth rows assert what a client sees).
    assert.deepEqual(gw.applyErrors.map(String).filter((e) => !/ProxyPolicy\/default\/extauth(-down)?-/.test(e)), []);
    clients = new Clients(gw);
  });
  after(async () => {
    await clients?.close();
    await gw?.close();
    await Promise.all([echo?.close(), provider?.stop(), target?.stop(), tlsProvider?.stop(), tlsTarget?.stop(), failing?.close(), tunnel?.close(), authz?.close()]);
  });

  const rows: Row[] = [
    ...perKind('tcp (connectTimeout and keepalive time applied; keepalive.retries reported on every kind)', {
      svc: async () => {
        assert.equal((await clients.svc('tcp')).status, 200);
        assertReported(gw, 'tcp-svc', 'spec.backend.tcp.keepalive.retries', 'svc', ['PartiallyApplied']);
      },
      ai: async () => {
        assert.equal((await clients.chat('tcp')).text, 'hello');
        assertReported(gw, 'tcp-ai', 'spec.backend.tcp.keepalive.retries', 'ai', ['PartiallyApplied']);
      },
      mcp: async () => {
        assert.equal((await clients.callTool('tcp')).text, 'matrix');
        assertReported(gw, 'tcp-mcp', 'spec.backend.tcp.keepalive.retries', 'mcp', ['PartiallyApplied']);
      },
    }),
    ...perKind('tls (TLS originated with the configured CA and SNI; without the policy the HTTPS upstream is unreachable)', {
      svc: async () => {
        const res = await clients.svc('tls');
        assert.equal(res.status, 200, res.text);
        assert.equal(last(tlsProvider).path, '/tls/svc');
        assert.equal((await clients.svc('tls-none')).status, 502, 'plaintext to the HTTPS upstream fails');
        assertAccepted(gw, 'tls-svc');
      },
      ai: async () => {
        assert.equal((await clients.chat('tls')).text, 'hello');
        assert.match(last(tlsProvider).path, /\/chat\/completions$/);
        assert.equal(((await failure(clients.chat('tls-none'))) as { status?: number }).status, 502, 'plaintext to the HTTPS provider fails');
        assertAccepted(gw, 'tls-ai');
      },
      mcp: async () => {
        assert.equal((await clients.callTool('tls')).text, 'matrix');
        assert.equal(last(tlsTarget).what, 'tools/call');
        await failure(clients.callTool('tls-none'));
        assertAccepted(gw, 'tls-mcp');
      },
    }),
    ...perKind('http.requestTimeout 500ms (504 upstream_timeout)', {
      svc: async () => assertGatewayError(await clients.svc('http', { path: '?delay=2000' }), 504, 'upstream_timeout'),
      ai: async () => {
        const started = Date.now();
        assertOpenAIError(await failure(clients.chat('http', { model: 'slow' })), 504, 'server_error', 'upstream_timeout');
        assert.ok(Date.now() - started < 1500, 'answered at the deadline');
      },
      mcp: async () => {
        const { client } = await clients.mcp('http');
        const started = Date.now();
        const err = await failure(client.callTool({ name: 'slow', arguments: {} }));
        assert.ok(Date.now() - started < 1500, `answered at the deadline: ${String(err)}`);
        assert.match(String(err), /504|timed out|timeout/i);
        // A JSON-RPC error answering the call (HTTP 200), the gateway error in its data.
        const rpc = err as Error & { code?: number; data?: unknown };
        assert.equal(rpc.code, -32603, String(err));
        assert.deepEqual(rpc.data, { status: 504, code: 'upstream_timeout' });
      },
    }),
    ...perKind('tunnel (the upstream is reached through the HTTP CONNECT proxy)', {
      svc: async () => {
        assert.equal((await clients.svc('tunnel')).status, 200);
        assert.equal(tunnel.targets.at(-1), `127.0.0.1:${echo.port}`);
      },
      ai: async () => {
        assert.equal((await clients.chat('tunnel')).text, 'hello');
        assert.equal(tunnel.targets.at(-1), `127.0.0.1:${provider.port}`);
      },
      mcp: async () => {
        assert.equal((await clients.callTool('tunnel')).text, 'matrix');
        assert.equal(tunnel.targets.at(-1), `127.0.0.1:${target.port}`);
      },
    }),
    ...perKind('auth.key (the inline key replaces the client credential)', {
      svc: async () => assert.equal((await clients.svc('auth-key', { headers: { authorization: 'Bearer client' } })).echo().headers.authorization, 'Bearer sk-route'),
      ai: async () => {
        await clients.chat('auth-key', { apiKey: 'sk-client' });
        assert.equal(header(last(provider).headers, 'authorization'), 'Bearer sk-route');
      },
      mcp: async () => {
        await clients.callTool('auth-key', { authorization: 'Bearer client' });
        assert.equal(header(last(target).headers, 'authorization'), 'Bearer sk-route');
      },
    }),
    ...perKind('auth.secretRef (the Secret\'s key, Bearer prefix normalised)', {
      svc: async () => assert.equal((await clients.svc('auth-secret')).echo().headers.authorization, 'Bearer sk-secret'),
      ai: async () => {
        await clients.chat('auth-secret');
        assert.equal(header(last(provider).headers, 'authorization'), 'Bearer sk-secret');
      },
      mcp: async () => {
        await clients.callTool('auth-secret');
        assert.equal(header(last(target).headers, 'authorization'), 'Bearer sk-secret');
      },
    }),
    ...perKind('auth.secretRef naming a missing Secret (Invalid; 500, nothing upstream)', {
      svc: async () => {
        assertGatewayError(await nothingReaches(echo, () => clients.svc('auth-missing')), 500, 'policy_invalid');
        assert.equal(acceptedReason('auth-missing-svc'), 'Invalid');
      },
      ai: async () => {
        assertOpenAIError(await nothingReaches(provider, () => failure(clients.chat('auth-missing'))), 500, 'server_error', 'policy_invalid');
        assertAnthropicError(await nothingReaches(provider, () => failure(clients.message('auth-missing'))), 500, 'api_error');
        assert.equal(acceptedReason('auth-missing-ai'), 'Invalid');
      },
      mcp: async () => {
        assertJsonRpcRefusal(await nothingReaches(target, () => failure(clients.mcp('auth-missing'))), 500, -32603, 'policy_invalid');
        assert.equal(acceptedReason('auth-missing-mcp'), 'Invalid');
      },
    }),
    ...perKind('auth.passthrough (the client key validated by apiKeyAuthentication is re-added)', {
      svc: async () => assert.equal((await clients.svc('auth-passthrough', { headers: { authorization: 'Bearer sk-good' } })).echo().headers.authorization, 'Bearer sk-good'),
      ai: async () => {
        await clients.chat('auth-passthrough', { apiKey: 'sk-good' });
        assert.equal(header(last(provider).headers, 'authorization'), 'Bearer sk-good');
      },
      mcp: async () => {
        await clients.callTool('auth-passthrough', { authorization: 'Bearer sk-good' });
        assert.equal(header(last(target).headers, 'authorization'), 'Bearer sk-good');
      },
    }),
    ...perKind('transformation (a request header set on the upstream call)', {
      svc: async () => {
        assert.equal((await clients.svc('transformation')).echo().headers['x-btx'], 'on');
        assertAccepted(gw, 'transformation-svc');
      },
      ai: async () => {
        await clients.chat('transformation');
        assert.equal(header(last(provider).headers, 'x-btx'), 'on');
        assertAccepted(gw, 'transformation-ai');
      },
      mcp: async () => {
        await clients.callTool('transformation');
        assert.equal(header(last(target).headers, 'x-btx'), 'on');
        assertAccepted(gw, 'transformation-mcp');
      },
    }),
    ...perKind('transformation request.body and response.body (CEL over the bodies)', {
      svc: async () => {
        const res = await clients.svc('transformation-body', { path: '/hello', method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"model":"m"}' });
        assert.equal(res.echo().bodyLength, '{"model":"rewritten"}'.length, 'the upstream got the transformed body');
        assert.match(res.text, /\/HELLO/, 'the answer went through the response expression');
        assertAccepted(gw, 'transformation-body-svc');
      },
      // The expressions see the client's format (docs/llm.md): the OpenAI and the Anthropic SDK's bodies alike, before translation.
      ai: async () => {
        assert.equal((await clients.chat('transformation-body')).text, 'HELLO');
        assert.equal(last(provider).what, 'rewritten', 'the provider got the transformed body (translated)');
        assert.equal(await clients.message('transformation-body'), 'HELLO');
        assert.equal(last(provider).what, 'rewritten');
        assertAccepted(gw, 'transformation-body-ai');
      },
      // The expressions see JSON-RPC messages (docs/mcp.md): the client's call of `shout` reaches the target as `whoami`, its answer comes back upper-cased.
      mcp: async () => {
        assert.equal((await clients.callTool('transformation-rpc', {}, 'shout')).text, 'MATRIX');
        assert.equal(last(target).tool, 'whoami', 'the target got the transformed message');
        assertAccepted(gw, 'transformation-rpc-mcp');
      },
    }),
    ...perKind('health (an endpoint answering 5xx is evicted)', {
      svc: async () => {
        // Round robin over a healthy and a failing endpoint: the failing one answers at most once.
        const statuses: number[] = [];
        for (let i = 0; i < 8; i++) statuses.push((await clients.svc('health')).status);
        assert.ok(statuses.filter((s) => s === 503).length <= 1, `evicted after its first 503: ${statuses.join(' ')}`);
        assertAccepted(gw, 'health-svc');
      },
      // A group of a provider answering 503 and a healthy one: failover answers every request, and the
      // sick provider, evicted after its first 503, gets no more first attempts (in rotation it got every second one).
      ai: async () => {
        const before = failingHits;
        for (let i = 0; i < 8; i++) assert.equal((await clients.chat('health')).text, 'hello');
        assert.ok(failingHits - before <= 1, `evicted after its first 503: ${failingHits - before} requests reached it`);
        assertAccepted(gw, 'health-ai');
      },
      // The target's 503 holds the unhealthyCondition: evicted, it gets nothing (docs/mcp.md "Health").
      mcp: async () => {
        const { client } = await clients.mcp('health');
        await failure(client.callTool({ name: 'flaky', arguments: {} }));
        const err = await nothingReaches(target, () => failure(client.callTool({ name: 'whoami', arguments: {} })));
        assert.deepEqual((err as { data?: unknown }).data, { status: 503, code: 'no_healthy_upstream' }, String(err));
        assert.deepEqual((await nothingReaches(target, () => client.listTools())).tools, [], 'lists leave the evicted target out');
        assertAccepted(gw, 'health-mcp');
      },
    }),
    ...perKind('extAuth allow and deny (checked before the upstream call)', {
      svc: async () => {
        assert.equal((await clients.svc('extauth', { headers: { 'x-user': 'alice' } })).echo().headers['x-backend-auth'], 'alice');
        assert.equal((await nothingReaches(echo, () => clients.svc('extauth', { headers: { 'x-user': 'mallory' } }))).status, 401);
      },
      ai: async () => {
        assert.equal((await clients.chat('extauth', { headers: { 'x-user': 'alice' } })).text, 'hello');
        assert.equal(header(last(provider).headers, 'x-backend-auth'), 'alice');
        const err = await nothingReaches(provider, () => failure(clients.chat('extauth', { headers: { 'x-user': 'mallory' } })));
        assert.equal((err as { status?: number }).status, 401, String(err));
      },
      mcp: async () => {
        assert.equal((await clients.callTool('extauth', { 'x-user': 'alice' })).text, 'matrix');
        assert.equal(header(last(target).headers, 'x-backend-auth'), 'alice');
        const err = await nothingReaches(target, () => failure(clients.mcp('extauth', { 'x-user': 'mallory' })));
        assert.equal((err as { code?: number }).code, 401, String(err));
      },
    }),
    ...perKind('extAuth FailClosed with its service down (403, nothing upstream)', {
      svc: async () => assertGatewayError(await nothingReaches(echo, () => clients.svc('extauth-down')), 403, 'ext_auth_unavailable'),
      ai: async () => {
        assertOpenAIError(await nothingReaches(provider, () => failure(clients.chat('extauth-down'))), 403, 'permission_error', 'ext_auth_unavailable');
        assertAnthropicError(await nothingReaches(provider, () => failure(clients.message('extauth-down'))), 403, 'permission_error');
      },
      mcp: async () => assertJsonRpcRefusal(await nothingReaches(target, () => failure(clients.mcp('extauth-down'))), 403, -32001, 'ext_auth_unavailable'),
    }),
    ...perKind('ai.promptGuard (request guard refuses before the provider, response guard masks)', {
      ai: async () => {
        const ask = (content: string) => clients.openai('prompt-guard').chat.completions.create({ model: 'm', messages: [{ role: 'user', content }] });
        assertOpenAIError(await nothingReaches(provider, () => failure(ask('say forbidden things'))), 400, 'invalid_request_error', 'guard_rejected');
        assert.equal((await ask('hi')).choices[0]?.message.content, '<MASKED>');
        assertAccepted(gw, 'prompt-guard-ai');
      },
    }),
  ];
  runRows(rows);

  function acceptedReason(policy: string): string {
    const status = gw.statusOf('ProxyPolicy', policy) as { ancestors?: { conditions?: { type: string; reason: string }[] }[] };
    return status.ancestors?.[0]?.conditions?.find((c) => c.type === 'Accepted')?.reason ?? '';
  }
});
