/** Real servers for the external-service tests: gRPC (connect-node over h2c) and plain HTTP, on 127.0.0.1:0. */
import { createServer as createHttp2Server, type Http2Session } from 'node:http2';
import { createServer as createHttpServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import type { ConnectRouter } from '@connectrpc/connect';
import { connectNodeAdapter } from '@connectrpc/connect-node';
import { unusedPort } from '../support/ports.ts';

export interface RunningServer {
  readonly port: number;
  readonly url: string;
  close(): Promise<void>;
}

export interface RunningGrpcServer extends RunningServer {
  /** HTTP/2 sessions (client connections) opened and closed so far. */
  readonly sessions: { readonly opened: number; readonly closed: number };
}

export async function startGrpcServer(routes: (router: ConnectRouter) => void): Promise<RunningGrpcServer> {
  const sessions = new Set<Http2Session>();
  const counts = { opened: 0, closed: 0 };
  const server = createHttp2Server(connectNodeAdapter({ routes }));
  server.on('session', (s) => {
    sessions.add(s);
    counts.opened++;
    s.on('close', () => {
      sessions.delete(s);
      counts.closed++;
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    port,
    url: `http://127.0.0.1:${port}`,
    sessions: counts,
    close: () => new Promise<void>((resolve) => {
      for (const s of sessions) s.destroy();
      server.close(() => resolve());
    }),
  };
}

export async function startHttpServer(handler: (req: IncomingMessage, body: Buffer, res: ServerResponse) => void): Promise<RunningServer> {
  const sockets = new Set<Socket>();
  const server = createHttpServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => handler(req, Buffer.concat(chunks), res));
  });
  server.on('connection', (s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    port,
    url: `http://127.0.0.1:${port}`,
    close: () => new Promise<void>((resolve) => {
      for (const s of sockets) s.destroy();
      server.close(() => resolve());
    }),
  };
}

/** A port nothing listens on: bind, read the port, close. */
export function closedPort(): Promise<number> {
  return unusedPort();
}
