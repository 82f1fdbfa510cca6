/**
 * A hostile MCP target for test/hostile/mcp.test.ts: it speaks enough Streamable HTTP for the
 * gateway to initialize a session and list its tools, then answers a `tools/call` of
 * `sse_flood` with one SSE event that goes on for FLOOD_BYTES, and of `json_flood` with an
 * `application/json` body of FLOOD_BYTES. Both floods are a valid JSON-RPC result once complete,
 * so a gateway without its size bounds would pass them on as a successful call; `ok` answers
 * normally. Every flood is written in small chunks under backpressure and stops as soon as the
 * gateway closes the connection, which the server records.
 */
import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export const FLOOD_BYTES = 64 * 1024 * 1024;
const CHUNK_BYTES = 16 * 1024;

export interface FloodRecord {
  readonly tool: string;
  /** Bytes of the flood written so far. */
  sent: number;
  /** The gateway closed the connection before the flood was finished. */
  cutOff: boolean;
  /** The whole flood and its terminator went out. */
  finished: boolean;
}

export interface HostileMcpServer {
  readonly port: number;
  readonly floods: readonly FloodRecord[];
  close(): Promise<void>;
}

interface RpcRequest {
  readonly jsonrpc: '2.0';
  readonly id?: string | number;
  readonly method: string;
  readonly params?: { readonly name?: string; readonly protocolVersion?: string };
}

const TOOLS = ['sse_flood', 'json_flood', 'ok'].map((name) => ({ name, description: name, inputSchema: { type: 'object', properties: {} } }));

export async function startHostileMcpServer(): Promise<HostileMcpServer> {
  const floods: FloodRecord[] = [];
  const server = createServer((req, res) => {
    if (req.method === 'GET') return void res.writeHead(405, { allow: 'POST, DELETE' }).end();
    if (req.method === 'DELETE') return void res.writeHead(200).end();
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => answer(JSON.parse(Buffer.concat(chunks).toString('utf8')) as RpcRequest, res, floods));
  });
  await new Promise<void>((ok) => server.listen(0, '127.0.0.1', ok));
  return {
    port: (server.address() as AddressInfo).port,
    floods,
    close: () => new Promise((ok) => {
      server.closeAllConnections();
      server.close(() => ok());
    }),
  };
}

function answer(message: RpcRequest, res: ServerResponse, floods: FloodRecord[]): void {
  if (message.id === undefined) return void res.writeHead(202).end();
  const json = (result: unknown): void => void res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ jsonrpc: '2.0', id: message.id, result }));
  switch (message.method) {
    case 'initialize':
      return json({ protocolVersion: message.params?.protocolVersion ?? '2025-06-18', capabilities: { tools: {} }, serverInfo: { name: 'hostile', version: '1.0.0' } });
    case 'tools/list':
      return json({ tools: TOOLS });
    case 'tools/call': {
      const tool = message.params?.name ?? '';
      if (tool === 'ok') return json({ content: [{ type: 'text', text: 'fine' }] });
      const record: FloodRecord = { tool, sent: 0, cutOff: false, finished: false };
      floods.push(record);
      const head = `{"jsonrpc":"2.0","id":${JSON.stringify(message.id)},"result":{"content":[{"type":"text","text":"`;
      const tail = '"}]}}';
      if (tool === 'sse_flood') {
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        return void flood(res, record, `data: ${head}`, `${tail}\n\n`);
      }
      res.writeHead(200, { 'content-type': 'application/json' });
      return void flood(res, record, head, tail);
    }
    default:
      return json({});
  }
}

/** `head`, FLOOD_BYTES of `x` in CHUNK_BYTES chunks under backpressure, then `tail`, unless the reader goes away first. */
async function flood(res: ServerResponse, record: FloodRecord, head: string, tail: string): Promise<void> {
  let closed = false;
  res.on('close', () => {
    closed = true;
    if (!record.finished) record.cutOff = true;
  });
  res.write(head);
  const chunk = Buffer.alloc(CHUNK_BYTES, 'x');
  while (record.sent < FLOOD_BYTES && !closed) {
    record.sent += chunk.length;
    if (!res.write(chunk)) await drainedOrClosed(res);
  }
  if (closed) return;
  record.finished = true;
  res.end(tail);
}

function drainedOrClosed(res: ServerResponse): Promise<void> {
  return new Promise((ok) => {
    const done = (): void => {
      res.off('drain', done);
      res.off('close', done);
      ok();
    };
    res.on('drain', done);
    res.on('close', done);
  });
}
