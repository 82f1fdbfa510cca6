/**
 * One request lifecycle on every backend kind (issue 12 items 3–5): response effects (CORS,
 * headerModifiers.response, a route ResponseHeaderModifier filter) on AI answers, buffered and
 * streamed, and on MCP answers; the route's request timeout on an AI backend (504 in the client's
 * format, the provider request aborted, a stream that started in time not cut); and gateway
 * refusals (local rate limit 429, API-key 401) rendered in the client's format — OpenAI's,
 * Anthropic's, JSON-RPC — while a Service route keeps the gateway's JSON. Driven by the official
 * openai, @anthropic-ai/sdk and MCP SDK clients.
 */
import assert from 'node:assert/strict';
import { once } from 'node:events';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { connect, startEverything, type Upstream } from '../mcp/support.ts';
import { startEchoServer, type EchoServer } from '../support/echo-server.ts';
import { startGateway, type GatewayHarness } from '../support/gateway.ts';
import { gateway, gatewayClass, routeTrafficPolicy, service } from '../support/manifests.ts';
import { ROUTES } from '../llm/gateway-yaml.ts';

const ORIGIN = 'https://app.example.com';
const EFFECTS = `cors: { allowOrigins: ["${ORIGIN}"], allowMethods: [GET, POST] }
headerModifiers: { response: { set: [{ name: x-effect, value: applied }] } }`;

/** A provider speaking OpenAI chat completions: `slow` answers after 2 s, `slow-stream` streams its first chunk at once and the rest after 900 ms. */
interface Provider {
  readonly port: number;
  /** Models of requests whose connection closed before the answer was complete. */
  readonly aborted: string[];
  close(): void;
}

const chunk = (delta: Record<string, unknown>, finish: string | null) =>
  `data: ${JSON.stringify({ id: 'c1', object: 'chat.completion.chunk', created: 1, model: 'm', choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;
const USAGE = `data: ${JSON.stringify({ id: 'c1', object: 'chat.completion.chunk', created: 1, model: 'm', choices: [], usage: { prompt_tokens: 1, completion_tokens: 2, total_tokens: 3 } })}\n\ndata: [DONE]\n\n`;
const COMPLETION = JSON.stringify({
  id: 'c1', object: 'chat.completion', created: 1, model: 'm',
  choices: [{ index: 0, message: { role: 'assistant', content: 'hello' }, finish_reason: 'stop' }],
  usage: { prompt_tokens: 1, completion_tokens: 2, total_tokens: 3 },
});

async function startProvider(): Promise<Provider> {
  const aborted: string[] = [];
  const server = http.createServer((req, res) => {
    const parts: Buffer[] = [];
    req.on('data', (c: Buffer) => parts.push(c));
    req.on('end', () => {
      const body = JSON.parse(Buffer.concat(parts).toString() || '{}') as { model?: string; stream?: boolean };
      const model = body.model ?? '';
      res.on('close', () => {
        if (!res.writableEnded) aborted.push(model);
      });
      if (body.stream) {
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        res.write(chunk({ role: 'assistant', content: 'hel' }, null));
        setTimeout(() => {
          if (!res.destroyed) res.end(chunk({ content: 'lo' }, 'stop') + USAGE);
        }, model === 'slow-stream' ? 900 : 0);
        return;
      }
      setTimeout(() => {
        if (!res.destroyed) res.writeHead(200, { 'content-type': 'application/json' }).end(COMPLETION);
      }, model === 'slow' ? 2000 : 0);
    });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return {
    port: (server.address() as AddressInfo).port,
    aborted,
    close() {
      server.closeAllConnections();
      server.close();
    },
  };
}

function aiBackend(name: string, port: number): string {
  return `
---
apiVersion: switchboard.dev/v1alpha1
kind: ProxyBackend
metadata: { name: ${name} }
spec:
  ai:
    provider: { providerA: {}, host: 127.0.0.1, port: ${port} }
  policies:
    auth: { key: sk-upstream }
    ai: { routes: ${ROUTES} }
`;
}

/** An HTTPRoute on `gw` sending PathPrefix `prefix` to ProxyBackend `backend` (or Service `backend` port 8080), with extra rule YAML. */
function route(name: string, prefix: string, backend: string, opts: { kind?: 'ProxyBackend' | 'Service'; rule?: string } = {}): string {
  const ref = opts.kind === 'Service' ? `{ name: ${backend}, port: 8080 }` : `{ group: switchboard.dev, kind: ProxyBackend, name: ${backend} }`;
  return `
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: { name: ${name} }
spec:
  parentRefs: [{ name: gw }]
  rules:
    - matches: [{ path: { type: PathPrefix, value: ${prefix} } }]
      backendRefs: [${ref}]
${opts.rule ?? ''}`;
}

const ROUTE_FILTER = `      filters: [{ type: ResponseHeaderModifier, responseHeaderModifier: { set: [{ name: x-route-filter, value: "yes" }] } }]`;

/** Waits until `check` holds, up to `ms`. */
async function eventually(check: () => boolean, ms = 1000): Promise<boolean> {
  for (const started = Date.now(); Date.now() - started < ms; await new Promise((ok) => setTimeout(ok, 20))) if (check()) return true;
  return check();
}

const MCP_INIT = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 't', version: '1' } } });
const MCP_HEADERS = { 'content-type': 'application/json', accept: 'application/json, text/event-stream', origin: ORIGIN };

describe('one request lifecycle: response effects, deadlines and errors on ai and mcp backends', () => {
  let provider: Provider;
  let tools: Upstream;
  let echo: EchoServer;
  let gw: GatewayHarness;
  const openai = (prefix: string, apiKey = 'sk-client') => new OpenAI({ baseURL: gw.url(80, `${prefix}/v1`), apiKey, maxRetries: 0, defaultHeaders: { origin: ORIGIN } });
  const anthropic = (prefix: string, apiKey = 'sk-client') => new Anthropic({ baseURL: gw.url(80, prefix), apiKey, maxRetries: 0, defaultHeaders: { origin: ORIGIN } });
  const chat = (model: string) => ({ model, messages: [{ role: 'user' as const, content: 'hi' }] });
  const message = (model: string) => ({ model, max_tokens: 16, messages: [{ role: 'user' as const, content: 'hi' }] });

  before(async () => {
    [provider, tools, echo] = await Promise.all([startProvider(), startEverything(), startEchoServer('echo')]);
    gw = await startGateway(
      gatewayClass() + gateway('gw', [{ name: 'http', port: 80 }]) + service('echo', echo) +
      aiBackend('llm', provider.port) +
      `
---
apiVersion: v1
kind: Secret
metadata: { name: client-keys }
stringData: { team: sk-good }
---
apiVersion: switchboard.dev/v1alpha1
kind: ProxyBackend
metadata: { name: tools }
spec:
  mcp:
    targets: [{ name: one, static: { host: 127.0.0.1, port: ${tools.port} } }]
` +
      route('fx', '/fx', 'llm', { rule: ROUTE_FILTER }) + routeTrafficPolicy('fx', 'fx', EFFECTS) +
      route('slow', '/slow', 'llm', { rule: '      timeouts: { request: 500ms }' }) +
      route('limited', '/limited', 'llm') + routeTrafficPolicy('limited', 'limited', 'rateLimit: { local: [{ requests: 1, unit: Hours }] }') +
      route('keyed', '/keyed', 'llm') + routeTrafficPolicy('keyed', 'keyed', 'apiKeyAuthentication: { secretRef: { name: client-keys } }') +
      route('mcp-fx', '/mcp-fx', 'tools', { rule: ROUTE_FILTER }) + routeTrafficPolicy('mcp-fx', 'mcp-fx', EFFECTS) +
      route('mcp-limited', '/mcp-limited', 'tools') + routeTrafficPolicy('mcp-limited', 'mcp-limited', 'rateLimit: { local: [{ requests: 1, unit: Hours }] }') +
      route('svc-limited', '/svc-limited', 'echo', { kind: 'Service' }) + routeTrafficPolicy('svc-limited', 'svc-limited', 'rateLimit: { local: [{ requests: 1, unit: Hours }] }'),
    );
    assert.deepEqual(gw.applyErrors, []);
  });

  after(async () => {
    await gw?.close();
    provider?.close();
    await Promise.all([tools?.stop(), echo?.close()]);
  });

  const assertEffects = (headers: { get(name: string): string | null }) => {
    assert.equal(headers.get('access-control-allow-origin'), ORIGIN);
    assert.equal(headers.get('x-effect'), 'applied');
    assert.equal(headers.get('x-route-filter'), 'yes');
  };

  const rows: { readonly name: string; run(): Promise<void> }[] = [
    {
      name: 'response effects: buffered AI answer (OpenAI SDK)',
      async run() {
        const { data, response } = await openai('/fx').chat.completions.create(chat('m')).withResponse();
        assert.equal(data.choices[0].message.content, 'hello');
        assertEffects(response.headers);
      },
    },
    {
      name: 'response effects: streamed AI answer (OpenAI SDK)',
      async run() {
        const { data: stream, response } = await openai('/fx').chat.completions.create({ ...chat('m'), stream: true }).withResponse();
        let text = '';
        for await (const c of stream) text += c.choices[0]?.delta?.content ?? '';
        assert.equal(text, 'hello');
        assertEffects(response.headers);
      },
    },
    {
      name: 'response effects: streamed AI answer translated for the Anthropic SDK',
      async run() {
        const { data: stream, response } = await anthropic('/fx').messages.create({ ...message('m'), stream: true }).withResponse();
        let text = '';
        for await (const e of stream) if (e.type === 'content_block_delta' && e.delta.type === 'text_delta') text += e.delta.text;
        assert.equal(text, 'hello');
        assertEffects(response.headers);
      },
    },
    {
      name: 'response effects: MCP answer',
      async run() {
        const res = await fetch(gw.url(80, '/mcp-fx'), { method: 'POST', headers: MCP_HEADERS, body: MCP_INIT });
        assert.equal(res.status, 200);
        assertEffects(res.headers);
        await res.body?.cancel();
      },
    },
    {
      name: 'timeouts.request 500ms vs a 2 s provider: 504 in OpenAI format, provider request aborted',
      async run() {
        const abortedBefore = provider.aborted.length;
        const started = Date.now();
        const err = await openai('/slow').chat.completions.create(chat('slow')).then(() => undefined, (e: unknown) => e);
        assert.ok(err instanceof OpenAI.InternalServerError, String(err));
        assert.equal(err.status, 504);
        assert.deepEqual(err.error, { message: 'the request timed out', type: 'server_error', param: null, code: 'request_timeout' });
        assert.ok(Date.now() - started < 1500, 'answered at the deadline, not after the provider');
        assert.ok(await eventually(() => provider.aborted.length > abortedBefore), 'the provider request was aborted');
      },
    },
    {
      name: 'timeouts.request 500ms vs a 2 s provider: 504 in Anthropic format, provider request aborted',
      async run() {
        const abortedBefore = provider.aborted.length;
        const err = await anthropic('/slow').messages.create(message('slow')).then(() => undefined, (e: unknown) => e);
        assert.ok(err instanceof Anthropic.InternalServerError, String(err));
        assert.equal(err.status, 504);
        assert.deepEqual(err.error, { type: 'error', error: { type: 'api_error', message: 'the request timed out' } });
        assert.ok(await eventually(() => provider.aborted.length > abortedBefore), 'the provider request was aborted');
      },
    },
    {
      name: 'timeouts.request 500ms: a stream that starts in time is not cut (time to first byte)',
      async run() {
        const started = Date.now();
        const stream = await openai('/slow').chat.completions.create({ ...chat('slow-stream'), stream: true });
        let text = '';
        for await (const c of stream) text += c.choices[0]?.delta?.content ?? '';
        assert.equal(text, 'hello');
        assert.ok(Date.now() - started >= 800, 'the stream outlived the request timeout');
      },
    },
    {
      name: 'local rate limit 429: Anthropic SDK gets rate_limit_error, OpenAI SDK RateLimitError, headers kept',
      async run() {
        await openai('/limited').chat.completions.create(chat('m')); // spends the one request of the hour
        const a = await anthropic('/limited').messages.create(message('m')).then(() => undefined, (e: unknown) => e);
        assert.ok(a instanceof Anthropic.RateLimitError, String(a));
        assert.deepEqual(a.error, { type: 'error', error: { type: 'rate_limit_error', message: 'rate limit exceeded' } });
        assert.ok(a.headers?.get('retry-after'), 'retry-after kept');
        const o = await openai('/limited').chat.completions.create(chat('m')).then(() => undefined, (e: unknown) => e);
        assert.ok(o instanceof OpenAI.RateLimitError, String(o));
        assert.equal((o.error as { type?: string }).type, 'rate_limit_error');
        assert.equal(o.code, 'rate_limited');
        assert.ok(o.headers?.get('retry-after'), 'retry-after kept');
      },
    },
    {
      name: 'local rate limit 429: the MCP client gets a JSON-RPC error',
      async run() {
        const first = await fetch(gw.url(80, '/mcp-limited'), { method: 'POST', headers: MCP_HEADERS, body: MCP_INIT });
        assert.equal(first.status, 200);
        await first.body?.cancel();
        await assert.rejects(connect(gw.url(80, '/mcp-limited')), (err: Error & { code?: number }) => {
          assert.equal(err.code, 429);
          assert.match(err.message, /\{"jsonrpc":"2\.0","id":null,"error":\{"code":-32001,"message":"rate limit exceeded"/);
          return true;
        });
        const refused = await fetch(gw.url(80, '/mcp-limited'), { method: 'POST', headers: MCP_HEADERS, body: MCP_INIT });
        assert.equal(refused.status, 429);
        assert.ok(refused.headers.get('retry-after'));
        assert.deepEqual(await refused.json(), { jsonrpc: '2.0', id: null, error: { code: -32001, message: 'rate limit exceeded', data: { status: 429, code: 'rate_limited' } } });
      },
    },
    {
      name: 'API-key 401: AuthenticationError in both SDKs, WWW-Authenticate kept',
      async run() {
        const o = await openai('/keyed', 'sk-wrong').chat.completions.create(chat('m')).then(() => undefined, (e: unknown) => e);
        assert.ok(o instanceof OpenAI.AuthenticationError, String(o));
        assert.equal((o.error as { type?: string }).type, 'authentication_error');
        assert.match(o.headers?.get('www-authenticate') ?? '', /^Bearer/);
        const a = await anthropic('/keyed').messages.create(message('m')).then(() => undefined, (e: unknown) => e);
        assert.ok(a instanceof Anthropic.AuthenticationError, String(a));
        assert.equal((a.error as { error?: { type?: string } }).error?.type, 'authentication_error');
        assert.match(a.headers?.get('www-authenticate') ?? '', /^Bearer/);
        const ok = await openai('/keyed', 'sk-good').chat.completions.create(chat('m'));
        assert.equal(ok.choices[0].message.content, 'hello');
      },
    },
    {
      name: 'a Service route keeps the gateway JSON',
      async run() {
        assert.equal((await gw.request(80, { path: '/svc-limited' })).status, 200);
        const refused = await gw.request(80, { path: '/svc-limited' });
        assert.equal(refused.status, 429);
        assert.deepEqual(JSON.parse(refused.text), { error: { code: 'rate_limited', message: 'rate limit exceeded' } });
      },
    },
  ];

  for (const row of rows) it(row.name, row.run);
});
