/**
 * A WebSocket upstream: on connect it sends one JSON message describing the upgrade request it
 * received (so a test can see the path and headers the gateway forwarded), then echoes every
 * message back unchanged.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { WebSocketServer } from 'ws';

export interface WebSocketHello {
  server: string;
  path: string;
  headers: Record<string, string | string[] | undefined>;
}

export interface WebSocketEchoServer {
  readonly name: string;
  readonly host: '127.0.0.1';
  readonly port: number;
  close(): Promise<void>;
}

export async function startWebSocketEcho(name: string): Promise<WebSocketEchoServer> {
  const server = http.createServer((_req, res) => res.writeHead(426, { connection: 'close' }).end('upgrade required'));
  const wss = new WebSocketServer({ server });
  wss.on('connection', (socket, req) => {
    const hello: WebSocketHello = { server: name, path: req.url ?? '', headers: req.headers };
    socket.send(JSON.stringify(hello));
    socket.on('message', (data, isBinary) => socket.send(data, { binary: isBinary }));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    name,
    host: '127.0.0.1',
    port,
    async close() {
      for (const client of wss.clients) client.terminate();
      await new Promise<void>((resolve) => wss.close(() => resolve()));
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
