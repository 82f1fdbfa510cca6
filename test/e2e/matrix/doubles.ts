/**
 * The upstream doubles of the member × kind matrix, each recording every request it sees (method,
 * path, headers) so a row can assert what reached the upstream — or that nothing did:
 *
 * - a provider speaking OpenAI chat completions (the `ai` kind's upstream): model `slow` answers
 *   after 2 s, model `flaky` alternates 503 and 200 (first 503); any other path answers `{path}` as JSON, so a Service can point at it too (the
 *   backend TLS rows use it over HTTPS for the Service kind);
 * - an MCP target built with the official MCP SDK server (Streamable HTTP at `/mcp`, stateful)
 *   with tools `whoami` (answers `matrix`), `slow` (answers after 2 s) and `flaky` (answers
 *   `matrix`, but every other call — the first included — is refused with HTTP 503) and `greet`
 *   (answers `hello`); a tool call records its `tool`.
 *
 * Both speak HTTPS when given a certificate.
 */
import { randomUUID } from 'node:crypto';
import { createServer as createHttpServer, type IncomingHttpHeaders, type IncomingMessage, type Server as HttpServer, type ServerResponse } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { AddressInfo, Socket } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { CallToolRequestSchema, ListToolsRequestSchema } from '@modelcontextprotocol/sdk/types.js';

export interface Seen {
  readonly method: string;
  readonly path: string;
  readonly headers: IncomingHttpHeaders;
  /** The JSON body's `model` (provider) or JSON-RPC `method` (MCP target), when there is one. */
  readonly what?: string;
  /** The tool a `tools/call` names (MCP target). */
  readonly tool?: string;
}

export interface RecordingServer {
  readonly port: number;
  readonly seen: Seen[];
  /** Requests whose answer was cut before it was complete (the gateway gave up on them). */
  readonly aborted: Seen[];
  stop(): Promise<void>;
}

export interface TlsOptions {
  readonly certPem: string;
  readonly keyPem: string;
}

const SLOW_MS = 2000;

const completion = (content: string) => JSON.stringify({
  id: 'c1', object: 'chat.completion', created: 1, model: 'm',
  choices: [{ index: 0, message: { role: 'assistant', content }, finish_reason: 'stop' }],
  usage: { prompt_tokens: 1, completion_tokens: 2, total_tokens: 3 },
});

const chunk = (delta: Record<string, unknown>, finish: string | null) =>
  `data: ${JSON.stringify({ id: 'c1', object: 'chat.completion.chunk', created: 1, model: 'm', choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;

async function listen(handler: (req: IncomingMessage, res: ServerResponse) => void, tls?: TlsOptions): Promise<{ server: HttpServer; port: number; sockets: Set<Socket> }> {
  const server: HttpServer = tls ? createHttpsServer({ cert: tls.certPem, key: tls.keyPem }, handler) : createHttpServer(handler);
  const sockets = new Set<Socket>();
  server.on(tls ? 'secureConnection' : 'connection', (s: Socket) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, port: (server.address() as AddressInfo).port, sockets };
}

function stopper(server: HttpServer, sockets: Set<Socket>): () => Promise<void> {
  return async () => {
    for (const s of sockets) s.destroy();
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  };
}

async function readBody(req: IncomingMessage): Promise<Buffer> {
  const parts: Buffer[] = [];
  for await (const c of req) parts.push(c as Buffer);
  return Buffer.concat(parts);
}

function parse(body: Buffer): Record<string, unknown> | undefined {
  try {
    const value: unknown = JSON.parse(body.toString('utf8'));
    return value !== null && typeof value === 'object' && !Array.isArray(value) ? value as Record<string, unknown> : undefined;
  } catch {
    return undefined;
  }
}

export async function startProvider(tls?: TlsOptions): Promise<RecordingServer> {
  const seen: Seen[] = [];
  const aborted: Seen[] = [];
  let flaky = 0;
  const { server, port, sockets } = await listen((req, res) => {
    void (async () => {
      const body = parse(await readBody(req));
      const model = typeof body?.model === 'string' ? body.model : undefined;
      const record: Seen = { method: req.method ?? '', path: req.url ?? '/', headers: req.headers, ...(model ? { what: model } : {}) };
      seen.push(record);
      res.on('close', () => {
        if (!res.writableEnded) aborted.push(record);
      });
      if (!record.path.endsWith('/chat/completions')) {
        res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ path: record.path }));
        return;
      }
      if (model === 'slow') await sleep(SLOW_MS);
      if (model === 'flaky' && flaky++ % 2 === 0) {
        res.writeHead(503, { 'content-type': 'application/json' }).end('{"error":{"message":"flaky","type":"server_error"}}');
        return;
      }
      if (res.destroyed) return;
      if (body?.stream === true) {
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        res.end(chunk({ role: 'assistant', content: 'hello' }, 'stop') + 'data: [DONE]\n\n');
        return;
      }
      res.writeHead(200, { 'content-type': 'application/json' }).end(completion('hello'));
    })();
  }, tls);
  return { port, seen, aborted, stop: stopper(server, sockets) };
}

function buildMcpServer(): Server {
  const server = new Server({ name: 'matrix-target', version: '1.0.0' }, { capabilities: { tools: {} } });
  server.setRequestHandler(ListToolsRequestSchema, () => ({
    tools: [
      { name: 'whoami', description: 'Answers matrix', inputSchema: { type: 'object', properties: {} } },
      { name: 'slow', description: `Answers after ${SLOW_MS} ms`, inputSchema: { type: 'object', properties: {} } },
      { name: 'flaky', description: 'Answers matrix; every other call is refused with HTTP 503 first', inputSchema: { type: 'object', properties: {} } },
      { name: 'greet', description: 'Answers hello', inputSchema: { type: 'object', properties: {} } },
    ],
  }));
  server.setRequestHandler(CallToolRequestSchema, async (req) => {
    if (req.params.name === 'slow') await sleep(SLOW_MS);
    return { content: [{ type: 'text', text: req.params.name === 'greet' ? 'hello' : 'matrix' }] };
  });
  return server;
}

export async function startMcpTarget(tls?: TlsOptions): Promise<RecordingServer> {
  const seen: Seen[] = [];
  const aborted: Seen[] = [];
  const sessions = new Map<string, StreamableHTTPServerTransport>();
  let flaky = 0;
  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const raw = await readBody(req);
    const body = parse(raw);
    const rpc = typeof body?.method === 'string' ? body.method : undefined;
    const params = body?.params as { name?: unknown } | undefined;
    const tool = rpc === 'tools/call' && typeof params?.name === 'string' ? params.name : undefined;
    const record: Seen = { method: req.method ?? '', path: req.url ?? '/', headers: req.headers, ...(rpc ? { what: rpc } : {}), ...(tool !== undefined ? { tool } : {}) };
    seen.push(record);
    res.on('close', () => {
      if (!res.writableEnded) aborted.push(record);
    });
    // Every other call of `flaky` is refused at the HTTP level, before the MCP server sees it.
    if (tool === 'flaky' && flaky++ % 2 === 0) {
      res.writeHead(503, { 'content-type': 'text/plain' }).end('flaky');
      return;
    }
    if (new URL(req.url ?? '/', 'http://target').pathname !== '/mcp') {
      res.writeHead(404).end();
      return;
    }
    const sid = req.headers['mcp-session-id'];
    let transport = typeof sid === 'string' ? sessions.get(sid) : undefined;
    if (!transport) {
      if (typeof sid === 'string') {
        res.writeHead(404, { 'content-type': 'application/json' }).end(JSON.stringify({ jsonrpc: '2.0', id: null, error: { code: -32001, message: 'Session not found' } }));
        return;
      }
      const created = new StreamableHTTPServerTransport({ sessionIdGenerator: () => randomUUID(), onsessioninitialized: (id) => void sessions.set(id, created) });
      created.onclose = () => {
        if (created.sessionId !== undefined) sessions.delete(created.sessionId);
      };
      await buildMcpServer().connect(created);
      transport = created;
    }
    await transport.handleRequest(req, res, raw.length > 0 ? JSON.parse(raw.toString('utf8')) as unknown : undefined);
  };
  const { server, port, sockets } = await listen((req, res) => {
    handle(req, res).catch(() => {
      if (!res.headersSent) res.writeHead(500);
      res.end();
    });
  }, tls);
  const stop = stopper(server, sockets);
  return {
    port, seen, aborted,
    stop: async () => {
      await Promise.all([...sessions.values()].map((t) => t.close().catch(() => undefined)));
      await stop();
    },
  };
}
