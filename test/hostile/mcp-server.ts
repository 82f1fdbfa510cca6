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
import { writeFlood, type FloodRecord } from './flood.ts';

export const FLOOD_BYTES = 64 * 1024 * 1024;

export interface HostileMcpServer {
  readonly port: number;
  readonly floods: readonly { readonly tool: string; readonly record: FloodRecord }[];
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
  const floods: { tool: string; record: FloodRecord }[] = [];
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

function answer(message: RpcRequest, res: ServerResponse, floods: { tool: string; record: FloodRecord }[]): void {
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
      const head = `{"jsonrpc":"2.0","id":${JSON.stringify(message.id)},"result":{"content":[{"type":"text","text":"`;
      const tail = '"}]}}';
      if (tool === 'sse_flood') {
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        return void floods.push({ tool, record: writeFlood(res, FLOOD_BYTES, `data: ${head}`, `${tail}\n\n`) });
      }
      res.writeHead(200, { 'content-type': 'application/json' });
      return void floods.push({ tool, record: writeFlood(res, FLOOD_BYTES, head, tail) });
    }
    default:
      return json({});
  }
}
