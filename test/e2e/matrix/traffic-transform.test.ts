/**
 * Member × kind matrix, traffic members that change what passes: transformation, extProc, cors,
 * headerModifiers, hostRewrite — on a Service, an `ai` and an `mcp` backend (support.ts says how
 * the matrix is built and what a row asserts).
 */
import assert from 'node:assert/strict';
import { after, before, describe } from 'node:test';
import { create } from '@bufbuild/protobuf';
import { ExternalProcessor, ProcessingResponseSchema, type ProcessingRequest, type ProcessingResponse } from '../../../src/proxy/ext/gen/envoy/service/ext_proc/v3/external_processor_pb.js';
import { startGrpcServer, type RunningServer } from '../../ext/servers.ts';
import { startEchoServer, type EchoServer } from '../../support/echo-server.ts';
import { startGateway, type GatewayHarness } from '../../support/gateway.ts';
import { startMcpTarget, startProvider, type RecordingServer } from './doubles.ts';
import { assertAccepted, Clients, header, last, matrixYaml, perKind, runRows, type Row, type Variant } from './support.ts';

const ORIGIN = 'https://app.example.com';
const MCP_INIT = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } } });
const MCP_HEADERS = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };
const CHAT_BODY = JSON.stringify({ model: 'm', messages: [{ role: 'user', content: 'hi' }] });
/** A response body transformation that reads the body: the providers' `hello` comes back upper-cased. */
const TX_BODY = 'string(response.body).replace("hello", "HELLO")';

/** Defects found by this matrix (see the final report of the helper that wrote it). */

const respond = (init: Parameters<typeof create<typeof ProcessingResponseSchema>>[1]): ProcessingResponse => create(ProcessingResponseSchema, init);

/** An ext_proc processor: requests get `x-extproc: yes`, responses `x-extproc-resp: yes`. */
function startProcessor(): Promise<RunningServer> {
  return startGrpcServer((router) => router.service(ExternalProcessor, {
    async *process(requests: AsyncIterable<ProcessingRequest>): AsyncIterable<ProcessingResponse> {
      for await (const req of requests) {
        const r = req.request;
        if (r.case === 'requestHeaders') yield respond({ response: { case: 'requestHeaders', value: { response: { headerMutation: { setHeaders: [{ header: { key: 'x-extproc', value: 'yes' } }] } } } } });
        else if (r.case === 'responseHeaders') yield respond({ response: { case: 'responseHeaders', value: { response: { headerMutation: { setHeaders: [{ header: { key: 'x-extproc-resp', value: 'yes' } }] } } } } });
        else if (r.case === 'requestBody') yield respond({ response: { case: 'requestBody', value: {} } });
        else if (r.case === 'responseBody') {
          // Buffered response bodies (the `extproc-body` variant) come back with `hello` upper-cased.
          const text = Buffer.from(r.value.body).toString('utf8');
          const mutated = text.includes('hello') ? { response: { bodyMutation: { mutation: { case: 'body' as const, value: Buffer.from(text.replaceAll('hello', 'HELLO')) } } } } : {};
          yield respond({ response: { case: 'responseBody', value: mutated } });
        }
        else if (r.case === 'requestTrailers') yield respond({ response: { case: 'requestTrailers', value: {} } });
        else if (r.case === 'responseTrailers') yield respond({ response: { case: 'responseTrailers', value: {} } });
      }
    },
  }));
}

describe('member × kind matrix: transformation, extProc, cors, headerModifiers, hostRewrite', () => {
  let echo: EchoServer;
  let provider: RecordingServer;
  let target: RecordingServer;
  let processor: RunningServer;
  let gw: GatewayHarness;
  let clients: Clients;

  before(async () => {
    [echo, provider, target, processor] = await Promise.all([startEchoServer('echo'), startProvider(), startMcpTarget(), startProcessor()]);
    const variants: Variant[] = [
      { name: 'transformation', traffic: { transformation: { request: { set: [{ name: 'x-tx', value: '"on"' }] }, response: { set: [{ name: 'x-tx-resp', value: '"on"' }] } } } },
      { name: 'extproc', traffic: { extProc: { url: processor.url, processingOptions: { requestBodyMode: 'None', responseBodyMode: 'None' } } } },
      { name: 'extproc-body', traffic: { extProc: { url: processor.url, processingOptions: { requestHeaderMode: 'Skip', requestBodyMode: 'None', responseBodyMode: 'Buffered' } } } },
      { name: 'tx-body', traffic: { transformation: { response: { body: TX_BODY } } } },
      { name: 'cors', traffic: { cors: { allowOrigins: [ORIGIN], allowMethods: ['GET', 'POST'], allowHeaders: ['content-type', 'authorization', 'accept', 'mcp-session-id', 'mcp-protocol-version'] } } },
      { name: 'headermodifiers', traffic: { headerModifiers: { request: { set: [{ name: 'x-hm', value: 'on' }], remove: ['x-drop'] }, response: { set: [{ name: 'x-hm-resp', value: 'on' }] } } } },
      { name: 'host-none', traffic: { hostRewrite: { mode: 'None' } } },
      { name: 'host-auto', traffic: { hostRewrite: { mode: 'Auto' } } },
    ];
    gw = await startGateway(matrixYaml({ echo, provider, target }, variants));
    assert.deepEqual(gw.applyErrors, []);
    clients = new Clients(gw);
  });
  after(async () => {
    await clients?.close();
    await gw?.close();
    await Promise.all([echo?.close(), provider?.stop(), target?.stop(), processor?.close()]);
  });

  const rows: Row[] = [
    ...perKind('transformation.request (a header set by CEL)', {
      svc: async () => {
        assert.equal((await clients.svc('transformation')).echo().headers['x-tx'], 'on');
        assertAccepted(gw, 'transformation-svc');
      },
      ai: async () => {
        await clients.chat('transformation');
        assert.equal(header(last(provider).headers, 'x-tx'), 'on', 'the request transformation reached the provider');
      },
      mcp: async () => {
        assert.equal((await clients.callTool('transformation')).text, 'matrix');
        assert.equal(header(last(target).headers, 'x-tx'), 'on', 'the request transformation reached the target');
      },
    }),
    ...perKind('transformation.response (a header set by CEL)', {
      svc: async () => {
        assert.equal((await clients.svc('transformation')).headers['x-tx-resp'], 'on');
      },
      // Header changes apply on every kind (only `response.body` is reported, on mcp).
      ai: async () => {
        const { headers } = await clients.chat('transformation');
        assert.equal(headers.get('x-tx-resp'), 'on');
        assertAccepted(gw, 'transformation-ai');
      },
      mcp: async () => {
        const { responses } = await clients.callTool('transformation');
        for (const h of responses) assert.equal(h.get('x-tx-resp'), 'on');
        assertAccepted(gw, 'transformation-mcp');
      },
    }),
    ...perKind('transformation.response.body (CEL over the buffered answer)', {
      svc: async () => {
        const res = await clients.svc('tx-body', { path: '/hello' });
        assert.equal(res.status, 200);
        assert.match(res.text, /\/HELLO/, 'the echo of the path went through the expression');
        assertAccepted(gw, 'tx-body-svc');
      },
      // The expression sees the answer in the client's format (translated back), the OpenAI SDK's and the Anthropic SDK's alike.
      ai: async () => {
        assert.equal((await clients.chat('tx-body')).text, 'HELLO');
        assert.equal(await clients.message('tx-body'), 'HELLO');
        assertAccepted(gw, 'tx-body-ai');
      },
      // The expression sees the JSON-RPC message (docs/mcp.md): the `greet` tool's `hello` comes back upper-cased.
      mcp: async () => {
        assert.equal((await clients.callTool('tx-body', {}, 'greet')).text, 'HELLO');
        assertAccepted(gw, 'tx-body-mcp');
      },
    }),
    ...perKind('transformation.response.body on a streamed answer (the stream is buffered, transformed, then sent)', {
      ai: async () => {
        const stream = await clients.openai('tx-body').chat.completions.create({ model: 'm', stream: true, messages: [{ role: 'user', content: 'hi' }] });
        let text = '';
        for await (const event of stream) text += event.choices[0]?.delta.content ?? '';
        assert.equal(text, 'HELLO');
      },
    }),
    ...perKind('extProc request headers phase (a header mutation)', {
      svc: async () => {
        assert.equal((await clients.svc('extproc')).echo().headers['x-extproc'], 'yes');
        assertAccepted(gw, 'extproc-svc');
      },
      ai: async () => {
        await clients.chat('extproc');
        assert.equal(header(last(provider).headers, 'x-extproc'), 'yes', 'the request phase mutation reached the provider');
      },
      mcp: async () => {
        await clients.callTool('extproc');
        assert.equal(header(last(target).headers, 'x-extproc'), 'yes', 'the request phase mutation reached the target');
      },
    }),
    ...perKind('extProc response headers phase (a header mutation)', {
      svc: async () => {
        assert.equal((await clients.svc('extproc')).headers['x-extproc-resp'], 'yes');
      },
      ai: async () => {
        const { headers } = await clients.chat('extproc');
        assert.equal(headers.get('x-extproc-resp'), 'yes');
        assertAccepted(gw, 'extproc-ai');
      },
      mcp: async () => {
        const { responses } = await clients.callTool('extproc');
        assert.ok(responses.length > 0);
        for (const h of responses) assert.equal(h.get('x-extproc-resp'), 'yes');
        assertAccepted(gw, 'extproc-mcp');
      },
    }),
    ...perKind('extProc response body phase (Buffered: the processor rewrites the body)', {
      svc: async () => {
        const res = await clients.svc('extproc-body', { path: '/hello' });
        assert.equal(res.status, 200);
        assert.match(res.text, /\/HELLO/);
        assertAccepted(gw, 'extproc-body-svc');
      },
      ai: async () => {
        assert.equal((await clients.chat('extproc-body')).text, 'HELLO');
        assert.equal(await clients.message('extproc-body'), 'HELLO');
        assertAccepted(gw, 'extproc-body-ai');
      },
      // The processor gets the answer's JSON-RPC body (docs/mcp.md).
      mcp: async () => {
        assert.equal((await clients.callTool('extproc-body', {}, 'greet')).text, 'HELLO');
        assertAccepted(gw, 'extproc-body-mcp');
      },
    }),
    ...perKind('cors (preflight answered by the gateway, allow-origin on answers)', {
      svc: async () => {
        const seen = echo.seen.length;
        const pre = await clients.svc('cors', { method: 'OPTIONS', headers: { origin: ORIGIN, 'access-control-request-method': 'POST' } });
        assert.equal(pre.headers['access-control-allow-origin'], ORIGIN);
        assert.equal(echo.seen.length, seen, 'the preflight is answered by the gateway');
        const res = await clients.svc('cors', { headers: { origin: ORIGIN } });
        assert.equal(res.headers['access-control-allow-origin'], ORIGIN);
      },
      ai: async () => {
        const seen = provider.seen.length;
        const pre = await fetch(gw.url(80, '/cors/ai/v1/chat/completions'), { method: 'OPTIONS', headers: { origin: ORIGIN, 'access-control-request-method': 'POST', 'access-control-request-headers': 'content-type,authorization' } });
        assert.equal(pre.headers.get('access-control-allow-origin'), ORIGIN);
        assert.equal(provider.seen.length, seen, 'the preflight is answered by the gateway');
        const { headers } = await clients.chat('cors', { headers: { origin: ORIGIN } });
        assert.equal(headers.get('access-control-allow-origin'), ORIGIN);
      },
      mcp: async () => {
        const seen = target.seen.length;
        const pre = await fetch(gw.url(80, '/cors/mcp'), { method: 'OPTIONS', headers: { origin: ORIGIN, 'access-control-request-method': 'POST', 'access-control-request-headers': 'content-type,mcp-session-id' } });
        assert.equal(pre.headers.get('access-control-allow-origin'), ORIGIN);
        assert.equal(target.seen.length, seen, 'the preflight is answered by the gateway');
        const { responses } = await clients.callTool('cors', { origin: ORIGIN });
        assert.ok(responses.length > 0);
        for (const h of responses) assert.equal(h.get('access-control-allow-origin'), ORIGIN);
      },
    }),
    ...perKind('headerModifiers.request (set and remove)', {
      svc: async () => {
        const seen = (await clients.svc('headermodifiers', { headers: { 'x-drop': 'secret' } })).echo();
        assert.equal(seen.headers['x-hm'], 'on');
        assert.equal(seen.headers['x-drop'], undefined);
      },
      ai: async () => {
        await clients.chat('headermodifiers', { headers: { 'x-drop': 'secret' } });
        const seen = last(provider).headers;
        assert.equal(header(seen, 'x-hm'), 'on');
        assert.equal(header(seen, 'x-drop'), undefined);
      },
      mcp: async () => {
        await clients.callTool('headermodifiers', { 'x-drop': 'secret' });
        const seen = last(target).headers;
        assert.equal(header(seen, 'x-hm'), 'on');
        assert.equal(header(seen, 'x-drop'), undefined);
      },
    }),
    ...perKind('headerModifiers.response (set)', {
      svc: async () => {
        assert.equal((await clients.svc('headermodifiers')).headers['x-hm-resp'], 'on');
      },
      ai: async () => {
        assert.equal((await clients.chat('headermodifiers')).headers.get('x-hm-resp'), 'on');
      },
      mcp: async () => {
        const { responses } = await clients.callTool('headermodifiers');
        assert.ok(responses.length > 0);
        for (const h of responses) assert.equal(h.get('x-hm-resp'), 'on');
      },
    }),
    ...perKind('hostRewrite None (the client Host passes)', {
      svc: async () => {
        const res = await clients.svc('host-none', { host: 'client.example' });
        assert.equal(res.echo().host, 'client.example');
      },
      // Raw requests: the SDKs' fetch cannot set Host.
      ai: async () => {
        const res = await gw.request(80, { path: '/host-none/ai/v1/chat/completions', method: 'POST', host: 'client.example', headers: { 'content-type': 'application/json' }, body: CHAT_BODY });
        assert.equal(res.status, 200, res.text);
        assert.equal(header(last(provider).headers, 'host'), 'client.example');
        assertAccepted(gw, 'host-none-ai');
      },
      mcp: async () => {
        const res = await gw.request(80, { path: '/host-none/mcp', method: 'POST', host: 'client.example', headers: MCP_HEADERS, body: MCP_INIT });
        assert.equal(res.status, 200, res.text);
        assert.equal(header(last(target).headers, 'host'), 'client.example');
        assertAccepted(gw, 'host-none-mcp');
      },
    }),
    ...perKind('hostRewrite Auto (the destination is the Host)', {
      svc: async () => {
        const res = await clients.svc('host-auto', { host: 'client.example' });
        assert.equal(res.echo().host, `127.0.0.1:${echo.port}`);
        assertAccepted(gw, 'host-auto-svc');
      },
      ai: async () => {
        const res = await gw.request(80, { path: '/host-auto/ai/v1/chat/completions', method: 'POST', host: 'client.example', headers: { 'content-type': 'application/json' }, body: CHAT_BODY });
        assert.equal(res.status, 200, res.text);
        assert.equal(header(last(provider).headers, 'host'), `127.0.0.1:${provider.port}`);
        assertAccepted(gw, 'host-auto-ai');
      },
      mcp: async () => {
        const res = await gw.request(80, { path: '/host-auto/mcp', method: 'POST', host: 'client.example', headers: MCP_HEADERS, body: MCP_INIT });
        assert.equal(res.status, 200, res.text);
        assert.equal(header(last(target).headers, 'host'), `127.0.0.1:${target.port}`);
        assertAccepted(gw, 'host-auto-mcp');
      },
    }),
  ];
  runRows(rows);
});
