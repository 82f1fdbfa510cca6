/** The clients of the forward-proxy tests: a CONNECT written by hand, and a curl-style absolute-form request. */
import { once } from 'node:events';
import http from 'node:http';
import { connect as netConnect } from 'node:net';

/** The status line of the gateway's answer to `CONNECT authority` on `127.0.0.1:port`. */
export async function rawConnect(port: number, authority: string): Promise<string> {
  const socket = netConnect(port, '127.0.0.1');
  await once(socket, 'connect');
  socket.write(`CONNECT ${authority} HTTP/1.1\r\nhost: ${authority}\r\n\r\n`);
  const [chunk] = (await once(socket, 'data')) as [Buffer];
  socket.destroy();
  return chunk.toString().split('\r\n')[0];
}

/** A curl-style proxied request: the absolute-form `target` sent to the gateway on `127.0.0.1:proxyPort`. */
export async function viaProxy(proxyPort: number, target: string, init: { method?: string; body?: string; headers?: Record<string, string> } = {}): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const headers = { ...init.headers, host: new URL(target).host };
    const req = http.request({ host: '127.0.0.1', port: proxyPort, method: init.method ?? 'GET', path: target, headers }, (res) => {
      const parts: Buffer[] = [];
      res.on('data', (c: Buffer) => parts.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(parts).toString() }));
    });
    req.on('error', reject);
    req.end(init.body);
  });
}
