/**
 * Member × kind matrix, backend `auth.cloudA`, `auth.cloudB` and `auth.cloudC` on a Service, an
 * `ai` and an `mcp` backend (official SDK clients on the AI and MCP rows). Each upstream sits
 * behind a recording front that keeps every request as it arrived, body included, so a row can
 * check the credential the upstream got:
 *
 * - cloudA: a SigV4 Authorization, verified by recomputing it with aws4 from what arrived (the
 *   headers it names, the path and query, the body or the payload hash it declares);
 * - cloudB: the bearer token a local Entra endpoint issued for the Secret's client credentials
 *   (AZURE_AUTHORITY_HOST points the gateway at it, as Azure's SDKs honour it);
 * - cloudC: the access or ID token a local token endpoint issued for the service account's signed
 *   JWT grant (the account's `token_uri` names it).
 *
 * Credentials that cannot work are refused on every kind and nothing reaches the upstream.
 */
import assert from 'node:assert/strict';
import { createHash, generateKeyPairSync } from 'node:crypto';
import { createServer, request as httpRequest, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe } from 'node:test';
import aws4 from 'aws4';
import { importSPKI, jwtVerify } from 'jose';
import { closedPort } from '../../ext/servers.ts';
import { startEchoServer, type EchoServer } from '../../support/echo-server.ts';
import { startGateway, type GatewayHarness } from '../../support/gateway.ts';
import { service } from '../../support/manifests.ts';
import { AWS_KEYS } from '../../llm/fake-cloud.ts';
import { startMcpTarget, startProvider, type RecordingServer } from './doubles.ts';
import {
  aiBackend, assertGatewayError, assertJsonRpcRefusal, assertOpenAIError, assertAnthropicError, Clients, failure, header, matrixYaml, mcpBackend, nothingReaches, perKind, runRows, secret, type Row, type Variant,
} from './support.ts';

const SERVICE = 'execute-api';
const REGION = 'eu-west-1';
const sha256 = (data: string | Buffer) => createHash('sha256').update(data).digest('hex');

interface Arrived {
  readonly method: string;
  readonly path: string;
  readonly headers: IncomingHttpHeaders;
  readonly body: Buffer;
}

interface Front {
  readonly port: number;
  readonly seen: Arrived[];
  close(): Promise<void>;
}

/** An HTTP front that records each request (body buffered) and relays it to `port`, streaming the answer back. */
async function startFront(port: number): Promise<Front> {
  const seen: Arrived[] = [];
  const server: Server = createServer((req, res) => {
    const parts: Buffer[] = [];
    req.on('data', (c: Buffer) => parts.push(c)).on('end', () => {
      const body = Buffer.concat(parts);
      seen.push({ method: req.method ?? '', path: req.url ?? '/', headers: req.headers, body });
      const up = httpRequest({ host: '127.0.0.1', port, method: req.method, path: req.url, headers: req.headers }, (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      });
      up.on('error', () => (res.headersSent ? res.destroy() : res.writeHead(502).end()));
      up.end(body);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as AddressInfo).port,
    seen,
    close: () => new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    }),
  };
}

/** A token endpoint double: records each form it is posted and answers with `answer(form)`. */
async function startTokenEndpoint(answer: (path: string, form: URLSearchParams) => Promise<Record<string, unknown>>): Promise<{ url: string; forms: URLSearchParams[]; close(): Promise<void> }> {
  const forms: URLSearchParams[] = [];
  const server = createServer((req, res) => {
    let text = '';
    req.setEncoding('utf8').on('data', (c: string) => (text += c)).on('end', () => {
      const form = new URLSearchParams(text);
      forms.push(form);
      answer(req.url ?? '/', form).then(
        (body) => res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(body)),
        (err: unknown) => res.writeHead(400, { 'content-type': 'application/json' }).end(JSON.stringify({ error: 'invalid_grant', error_description: String(err) })),
      );
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    forms,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/**
 * Checks a request's SigV4 Authorization as the cloud-A service would: scope, then the signature
 * recomputed with aws4 over the headers it names, the path as it arrived, and the body (or the
 * payload hash it declares in x-amz-content-sha256, which must then match the body or be UNSIGNED-PAYLOAD).
 */
function assertSigV4(seen: Arrived): void {
  const authorization = String(seen.headers.authorization ?? '');
  const m = /^AWS4-HMAC-SHA256 Credential=([A-Z0-9]+)\/(\d{8})\/([^/]+)\/([^/]+)\/aws4_request, SignedHeaders=([a-z0-9;-]+), Signature=[0-9a-f]{64}$/.exec(authorization);
  assert.ok(m, `a SigV4 Authorization: ${authorization}`);
  assert.deepEqual([m[1], m[3], m[4]], [AWS_KEYS.accessKeyId, REGION, SERVICE]);
  const signed = m[5].split(';');
  for (const required of ['host', 'x-amz-date']) assert.ok(signed.includes(required), `${required} is signed: ${m[5]}`);
  const declared = header(seen.headers, 'x-amz-content-sha256');
  if (declared !== undefined && declared !== 'UNSIGNED-PAYLOAD') assert.equal(declared, sha256(seen.body), 'the declared payload hash is the body\'s');
  const headers = Object.fromEntries(signed.map((h) => [h, String(header(seen.headers, h) ?? '')]));
  // aws4 hashes `body` unless x-amz-content-sha256 is among the headers; it adds content-length only when given a body.
  const again = { host: headers.host, method: seen.method, path: seen.path, service: SERVICE, region: REGION, headers, ...(signed.includes('content-length') ? { body: seen.body } : {}) };
  aws4.sign(again, AWS_KEYS);
  assert.equal((again.headers as Record<string, string>).Authorization, authorization, 'the signature recomputed from what arrived matches');
}

/** The MCP SDK's error for a session whose only target could not be reached (JSON-RPC -32000). */
function assertTargetUnavailable(err: unknown): void {
  assert.equal((err as { code?: number }).code, -32000, String(err));
  assert.match(String(err), /MCP target unavailable: one/);
}

describe('member × kind matrix: backend auth.cloudA, auth.cloudB, auth.cloudC', () => {
  let echo: EchoServer;
  let provider: RecordingServer;
  let target: RecordingServer;
  let fronts: { svc: Front; ai: Front; mcp: Front };
  let entra: Awaited<ReturnType<typeof startTokenEndpoint>>;
  let google: Awaited<ReturnType<typeof startTokenEndpoint>>;
  let gw: GatewayHarness;
  let clients: Clients;
  const saved = { ...process.env };

  before(async () => {
    [echo, provider, target] = await Promise.all([startEchoServer('echo'), startProvider(), startMcpTarget()]);
    fronts = { svc: await startFront(echo.port), ai: await startFront(provider.port), mcp: await startFront(target.port) };
    entra = await startTokenEndpoint(async (path, form) => {
      if (path !== '/tenant-1/oauth2/v2.0/token' || form.get('client_id') !== 'app-1' || form.get('client_secret') !== 's3cret' || form.get('grant_type') !== 'client_credentials') throw new Error('unknown client');
      return { token_type: 'Bearer', expires_in: 3600, access_token: 'entra-token' };
    });
    const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
    const verifyKey = await importSPKI(publicKey.export({ type: 'spki', format: 'pem' }).toString(), 'RS256');
    const issuer = 'gw@proj-1.iam.gserviceaccount.com';
    google = await startTokenEndpoint(async (_path, form) => {
      const { payload } = await jwtVerify(form.get('assertion') ?? '', verifyKey, { issuer, audience: `${google.url}/token` });
      // A JWT grant with target_audience asks for an ID token (cloud-C IdToken), else for an access token.
      if (typeof payload.target_audience === 'string') return { id_token: `gcp-id:${payload.target_audience}` };
      return { access_token: 'gcp-access', expires_in: 3600, token_type: 'Bearer' };
    });
    const account = (tokenUri: string) => JSON.stringify({ type: 'service_account', client_email: issuer, private_key: privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(), token_uri: tokenUri });
    const dead = await closedPort();

    // The gateway runs in this process and reads the environment per request: the Entra double,
    // and no ambient cloud-A keys (the no-keys rows must find none).
    process.env.AZURE_AUTHORITY_HOST = entra.url;
    for (const name of ['AWS_ACCESS_KEY_ID', 'AWS_SECRET_ACCESS_KEY', 'AWS_SESSION_TOKEN', 'AWS_PROFILE']) delete process.env[name];

    const cloudA = { secretRef: { name: 'aws-keys' }, serviceName: SERVICE, region: REGION };
    const variants: Variant[] = [
      { name: 'cloud-a', backend: { auth: { cloudA } } },
      { name: 'cloud-b', backend: { auth: { cloudB: { secretRef: { name: 'entra' } } } } },
      { name: 'cloud-c', backend: { auth: { cloudC: { secretRef: { name: 'gcp-sa' } } } } },
      { name: 'cloud-c-id', backend: { auth: { cloudC: { type: 'IdToken', secretRef: { name: 'gcp-sa' } } } }, kinds: ['svc', 'mcp'] },
      { name: 'cloud-invalid', backend: { auth: { cloudB: { secretRef: { name: 'entra-half' } } } } },
      { name: 'cloud-nokeys', backend: { auth: { cloudA: { serviceName: SERVICE, region: REGION } } } },
      { name: 'cloud-down', backend: { auth: { cloudC: { secretRef: { name: 'gcp-sa-down' } } } } },
    ];
    const refs = (v: Variant): Variant => ({
      ...v,
      refs: { svc: { name: 'echo-front', port: 8080 }, ai: { group: 'switchboard.dev', kind: 'ProxyBackend', name: 'llm-front' }, mcp: { group: 'switchboard.dev', kind: 'ProxyBackend', name: 'tools-front' } },
    });
    const extra = secret('aws-keys', { accessKey: AWS_KEYS.accessKeyId, secretKey: AWS_KEYS.secretAccessKey })
      + secret('entra', { clientID: 'app-1', tenantID: 'tenant-1', clientSecret: 's3cret' })
      + secret('entra-half', { clientID: 'app-1', tenantID: 'tenant-1' })
      + secret('gcp-sa', { 'credentials.json': account(`${google.url}/token`) })
      + secret('gcp-sa-down', { 'credentials.json': account(`http://127.0.0.1:${dead}/token`) });
    // The same upstreams behind their recording fronts.
    const frontBackends = service('echo-front', { host: '127.0.0.1', port: fronts.svc.port }) + aiBackend('llm-front', fronts.ai.port) + mcpBackend('tools-front', fronts.mcp.port);
    gw = await startGateway(matrixYaml({ echo, provider, target }, variants.map(refs), frontBackends + extra));
    clients = new Clients(gw);
  });
  after(async () => {
    process.env = saved;
    await clients?.close();
    await gw?.close();
    await Promise.all([echo?.close(), provider?.stop(), target?.stop(), entra?.close(), google?.close(), ...Object.values(fronts ?? {}).map((f) => f.close())]);
  });

  const lastAt = (front: Front) => {
    const found = front.seen.at(-1);
    assert.ok(found, 'the upstream saw a request');
    return found;
  };

  const rows: Row[] = [
    ...perKind('auth.cloudA (SigV4: the signature recomputed from what the upstream got)', {
      svc: async () => {
        const got = await clients.svc('cloud-a', { path: '/items?b=2&a=1', headers: { authorization: 'Bearer client' } });
        assert.equal(got.status, 200, got.text);
        const arrived = lastAt(fronts.svc);
        assertSigV4(arrived);
        assert.equal(header(arrived.headers, 'x-amz-content-sha256'), sha256(''), 'a GET without a body signs the empty payload');
        // A streamed body of unknown hash: UNSIGNED-PAYLOAD, the body itself untouched.
        const posted = await clients.svc('cloud-a', { method: 'POST', path: '/upload', headers: { 'content-type': 'text/plain' }, body: 'streamed body' });
        assert.equal(posted.status, 200, posted.text);
        const upload = lastAt(fronts.svc);
        assertSigV4(upload);
        assert.equal(header(upload.headers, 'x-amz-content-sha256'), 'UNSIGNED-PAYLOAD');
        assert.equal(upload.body.toString(), 'streamed body');
      },
      ai: async () => {
        assert.equal((await clients.chat('cloud-a')).text, 'hello');
        assertSigV4(lastAt(fronts.ai));
      },
      mcp: async () => {
        const before = fronts.mcp.seen.length;
        assert.equal((await clients.callTool('cloud-a')).text, 'matrix');
        const calls = fronts.mcp.seen.slice(before);
        assert.ok(calls.some((c) => c.body.toString().includes('"tools/call"')), 'the tool call went through the front');
        for (const call of calls) assertSigV4(call);
      },
    }),
    ...perKind('auth.cloudB (the Entra token for the Secret\'s client credentials)', {
      svc: async () => {
        assert.equal((await clients.svc('cloud-b', { headers: { authorization: 'Bearer client' } })).echo().headers.authorization, 'Bearer entra-token');
        assert.equal(entra.forms.at(-1)?.get('scope'), 'https://cognitiveservices.azure.com/.default');
      },
      ai: async () => {
        await clients.chat('cloud-b');
        assert.equal(header(lastAt(fronts.ai).headers, 'authorization'), 'Bearer entra-token');
      },
      mcp: async () => {
        await clients.callTool('cloud-b');
        assert.equal(header(lastAt(fronts.mcp).headers, 'authorization'), 'Bearer entra-token');
      },
    }),
    ...perKind('auth.cloudC AccessToken (the token endpoint\'s access token for the service account\'s grant)', {
      svc: async () => assert.equal((await clients.svc('cloud-c')).echo().headers.authorization, 'Bearer gcp-access'),
      ai: async () => {
        await clients.chat('cloud-c');
        assert.equal(header(lastAt(fronts.ai).headers, 'authorization'), 'Bearer gcp-access');
      },
      mcp: async () => {
        const before = fronts.mcp.seen.length;
        await clients.callTool('cloud-c');
        const calls = fronts.mcp.seen.slice(before);
        assert.ok(calls.length >= 2);
        for (const call of calls) assert.equal(header(call.headers, 'authorization'), 'Bearer gcp-access');
      },
    }),
    ...perKind('auth.cloudC IdToken (audience: the backend\'s own origin)', {
      svc: async () => assert.equal((await clients.svc('cloud-c-id')).echo().headers.authorization, 'Bearer gcp-id:https://127.0.0.1'),
      mcp: async () => {
        await clients.callTool('cloud-c-id');
        assert.equal(header(lastAt(fronts.mcp).headers, 'authorization'), 'Bearer gcp-id:https://127.0.0.1');
      },
    }),
    ...perKind('cloud credentials that cannot work (a cloud-B Secret without clientSecret): 500, nothing upstream', {
      svc: async () => assertGatewayError(await nothingReaches(fronts.svc, () => clients.svc('cloud-invalid')), 500, 'policy_invalid'),
      ai: async () => {
        assertOpenAIError(await nothingReaches(fronts.ai, () => failure(clients.chat('cloud-invalid'))), 500, 'server_error', 'policy_invalid');
        assertAnthropicError(await nothingReaches(fronts.ai, () => failure(clients.message('cloud-invalid'))), 500, 'api_error');
      },
      mcp: async () => assertJsonRpcRefusal(await nothingReaches(fronts.mcp, () => failure(clients.mcp('cloud-invalid'))), 500, -32603, 'policy_invalid'),
    }),
    // Found per request (the environment may supply keys): a Service answers 500; an AI provider
    // without a credential is skipped like a failing one (502 when none is left); an MCP target
    // without one fails as an unavailable target (FailClosed: the session fails).
    ...perKind('cloud-A keys missing at request time (no Secret, none in the environment): refused, nothing upstream', {
      svc: async () => assertGatewayError(await nothingReaches(fronts.svc, () => clients.svc('cloud-nokeys')), 500, 'backend_policy_failed'),
      ai: async () => assertOpenAIError(await nothingReaches(fronts.ai, () => failure(clients.chat('cloud-nokeys'))), 502, 'server_error'),
      mcp: async () => assertTargetUnavailable(await nothingReaches(fronts.mcp, () => failure(clients.mcp('cloud-nokeys')))),
    }),
    ...perKind('cloud-C token endpoint down: refused, nothing upstream', {
      svc: async () => assertGatewayError(await nothingReaches(fronts.svc, () => clients.svc('cloud-down')), 502, 'backend_token_endpoint_failed'),
      ai: async () => assertOpenAIError(await nothingReaches(fronts.ai, () => failure(clients.chat('cloud-down'))), 502, 'server_error'),
      mcp: async () => assertTargetUnavailable(await nothingReaches(fronts.mcp, () => failure(clients.mcp('cloud-down')))),
    }),
  ];
  runRows(rows);
});
