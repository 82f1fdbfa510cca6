/**
 * A WebSocket upstream: on connect it sends one JSON message describing the upgrade request it
 * received (so a test can see the path and headers the gateway forwarded), then echoes every
 * message back unchanged.
 */
import http from 'node:http';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import type { TLSSocket } from 'node:tls';
import { WebSocketServer } from 'ws';

export interface WebSocketHello {
  server: string;
  path: string;
  headers: Record<string, string | string[] | undefined>;
  /** On a TLS server: the SNI and ALPN protocol the connection was made with. */
  tls?: { servername: string | false; alpn: string | false | null };
}

export interface WebSocketEchoServer {
  readonly name: string;
  readonly host: '127.0.0.1';
  readonly port: number;
  /** Upgrade requests that reached this server, accepted or not. */
  readonly upgrades: number;
  close(): Promise<void>;
}

/** With `tls` the server speaks only TLS (wss://), with that certificate. */
export async function startWebSocketEcho(name: string, tls?: { readonly certPem: string; readonly keyPem: string }): Promise<WebSocketEchoServer> {
  const refuse = (_req: http.IncomingMessage, res: http.ServerResponse) => res.writeHead(426, { connection: 'close' }).end('upgrade required');
  const server = tls ? https.createServer({ cert: tls.certPem, key: tls.keyPem }, refuse) : http.createServer(refuse);
  let upgrades = 0;
  server.prependListener('upgrade', () => upgrades++);
  const wss = new WebSocketServer({ server });
  wss.on('connection', (socket, req) => {
    const hello: WebSocketHello = { server: name, path: req.url ?? '', headers: req.headers };
    if (tls) {
      const secure = req.socket as TLSSocket & { servername: string | false };
      hello.tls = { servername: secure.servername, alpn: secure.alpnProtocol };
    }
    socket.send(JSON.stringify(hello));
    socket.on('message', (data, isBinary) => socket.send(data, { binary: isBinary }));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    name,
    host: '127.0.0.1',
    port,
    get upgrades() {
      return upgrades;
    },
    async close() {
      for (const client of wss.clients) client.terminate();
      await new Promise<void>((resolve) => wss.close(() => resolve()));
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
