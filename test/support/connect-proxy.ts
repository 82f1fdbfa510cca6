/**
 * A minimal HTTP CONNECT proxy (backend `tunnel` double, an upstream proxy to chain through) that
 * records the authorities it was asked for; spoken to over TLS when given a certificate.
 */
import { connect, type AddressInfo, type Socket } from 'node:net';
import type { IncomingMessage } from 'node:http';
import { createServer as createHttpServer } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';

export interface ConnectProxy {
  /** `http://127.0.0.1:<port>`, or `https://…` with TLS. */
  readonly url: string;
  readonly port: number;
  /** `host:port` of every CONNECT, in order. */
  readonly targets: string[];
  close(): Promise<void>;
}

export interface ConnectProxyOptions {
  /** Serve the proxy over TLS with this certificate. */
  readonly tls?: { readonly certPem: string; readonly keyPem: string };
}

export async function startConnectProxy(options: ConnectProxyOptions = {}): Promise<ConnectProxy> {
  const sockets = new Set<Socket>();
  const targets: string[] = [];
  const proxy = options.tls ? createHttpsServer({ cert: options.tls.certPem, key: options.tls.keyPem }) : createHttpServer();
  proxy.on('connect', (req: IncomingMessage, client: Socket, head: Buffer) => {
    targets.push(req.url ?? '');
    const [host, port] = (req.url ?? '').split(':');
    const upstream = connect(Number(port), host, () => {
      client.write('HTTP/1.1 200 Connection Established\r\n\r\n');
      if (head.length > 0) upstream.write(head);
      upstream.pipe(client);
      client.pipe(upstream);
    });
    sockets.add(client).add(upstream);
    const close = () => {
      client.destroy();
      upstream.destroy();
    };
    client.on('error', close).on('close', close);
    upstream.on('error', close).on('close', close);
  });
  await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
  const port = (proxy.address() as AddressInfo).port;
  return {
    url: `${options.tls ? 'https' : 'http'}://127.0.0.1:${port}`,
    port,
    targets,
    close: () => new Promise<void>((resolve) => {
      sockets.forEach((s) => s.destroy());
      proxy.close(() => resolve());
    }),
  };
}
