/** A minimal HTTP CONNECT proxy (backend `tunnel` double) that records the authorities it was asked for. */
import { connect, type AddressInfo, type Socket } from 'node:net';
import type { IncomingMessage } from 'node:http';
import { createServer as createHttpServer } from 'node:http';

export interface ConnectProxy {
  readonly url: string;
  /** `host:port` of every CONNECT, in order. */
  readonly targets: string[];
  close(): Promise<void>;
}

export async function startConnectProxy(): Promise<ConnectProxy> {
  const sockets = new Set<Socket>();
  const targets: string[] = [];
  const proxy = createHttpServer();
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
  return {
    url: `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`,
    targets,
    close: () => new Promise<void>((resolve) => {
      sockets.forEach((s) => s.destroy());
      proxy.close(() => resolve());
    }),
  };
}
