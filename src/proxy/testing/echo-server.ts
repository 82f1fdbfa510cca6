import { EventEmitter, once } from 'node:events';
import { createServer, type IncomingHttpHeaders, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createServer as createH2cServer, type Http2Server, type Http2ServerRequest, type Http2ServerResponse } from 'node:http2';
import type { AddressInfo, Socket } from 'node:net';
import { WebSocketServer } from 'ws';

/** What the echo server saw, returned as the JSON body of every response. */
export interface EchoRecord {
  readonly name: string;
  readonly method: string;
  readonly url: string;
  readonly httpVersion: string;
  readonly headers: IncomingHttpHeaders;
  readonly body: string;
  /** The client-side port of the connection: equal ports mean a reused connection. */
  readonly remotePort: number | undefined;
}

export interface EchoServer {
  readonly name: string;
  readonly port: number;
  /** Every request seen, in arrival order. */
  readonly seen: EchoRecord[];
  /** Resolves once `count` requests have been seen in total; rejects after 5 s without progress. */
  waitFor(count: number): Promise<void>;
  close(): Promise<void>;
}

/**
 * A test upstream answering every request with the request it saw as JSON. Request headers steer
 * it: `x-echo-status` sets the status, `x-echo-delay-ms` delays the response, `x-echo-header-<n>`
 * is echoed back as response header `<n>`, `x-echo-trailer` comes back as trailer `x-trailer` (h2c
 * only, as gRPC status does), `x-echo-reset` drops the connection without answering. WebSocket upgrades get an echoing socket (HTTP/1 only).
 */
export async function startEchoServer(opts: { name?: string; h2c?: boolean } = {}): Promise<EchoServer> {
  const name = opts.name ?? 'echo';
  const seen: EchoRecord[] = [];
  const events = new EventEmitter();
  const handler = (req: IncomingMessage | Http2ServerRequest, res: ServerResponse | Http2ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const record: EchoRecord = { name, method: req.method ?? '', url: req.url ?? '', httpVersion: req.httpVersion, headers: req.headers, body: Buffer.concat(chunks).toString('utf8'), remotePort: req.socket.remotePort };
      seen.push(record);
      events.emit('request');
      if (req.headers['x-echo-reset'] !== undefined) {
        req.socket.destroy();
        return;
      }
      const delay = Number(req.headers['x-echo-delay-ms'] ?? 0);
      const respond = () => {
        if (res.writableEnded || res.destroyed) return;
        const headers: Record<string, string> = { 'content-type': 'application/json', 'x-upstream': name };
        for (const [k, v] of Object.entries(req.headers)) {
          if (k.startsWith('x-echo-header-') && typeof v === 'string') headers[k.slice('x-echo-header-'.length)] = v;
        }
        (res as ServerResponse).writeHead(Number(req.headers['x-echo-status'] ?? 200), headers);
        const trailer = req.headers['x-echo-trailer'];
        if (opts.h2c && typeof trailer === 'string') res.addTrailers({ 'x-trailer': trailer });
        res.end(JSON.stringify(record));
      };
      if (delay > 0) setTimeout(respond, delay).unref();
      else respond();
    });
  };
  const server: Server | Http2Server = opts.h2c ? createH2cServer(handler) : createServer(handler);
  const sockets = new Set<Socket>();
  server.on('connection', (s: Socket) => {
    sockets.add(s);
    s.once('close', () => sockets.delete(s));
  });
  let wss: WebSocketServer | undefined;
  if (!opts.h2c) {
    wss = new WebSocketServer({ server: server as Server });
    wss.on('connection', (ws, req) => {
      ws.send(JSON.stringify({ name, url: req.url, headers: req.headers }));
      ws.on('message', (data, isBinary) => ws.send(data, { binary: isBinary }));
    });
  }
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return {
    name,
    port: (server.address() as AddressInfo).port,
    seen,
    async waitFor(count) {
      while (seen.length < count) await once(events, 'request', { signal: AbortSignal.timeout(5000) });
    },
    async close() {
      wss?.close();
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
