/**
 * A tiny upstream for the quickstart: it answers every request with JSON describing the request
 * it saw (method, path, headers, body), so you can see exactly what the gateway forwarded.
 * `?delay=MS` (at most 10 s) waits before answering, handy to watch a graceful shutdown drain.
 *
 *   node examples/quickstart/echo-server.ts [PORT]     (default 9090, 127.0.0.1)
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';

const MAX_DELAY_MS = 10_000;

export function createEchoServer(name = 'echo'): http.Server {
  return http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const url = new URL(req.url ?? '/', 'http://echo.invalid');
      const body = Buffer.concat(chunks).toString('utf8');
      const answer = JSON.stringify({ server: name, method: req.method, path: url.pathname, query: Object.fromEntries(url.searchParams), headers: req.headers, body }, null, 2);
      const delay = Math.min(Number(url.searchParams.get('delay')) || 0, MAX_DELAY_MS);
      setTimeout(() => res.writeHead(200, { 'content-type': 'application/json' }).end(`${answer}\n`), delay);
    });
  });
}

export function startEchoServer(port: number, host = '127.0.0.1', name = 'echo'): Promise<{ server: http.Server; port: number }> {
  const server = createEchoServer(name);
  return new Promise((resolve, reject) => {
    server.once('error', reject).listen(port, host, () => resolve({ server, port: (server.address() as AddressInfo).port }));
  });
}

if (import.meta.main) {
  const port = Number(process.argv[2] ?? 9090);
  const { server, port: bound } = await startEchoServer(port);
  process.stdout.write(`echo upstream listening on http://127.0.0.1:${bound}\n`);
  const stop = (): void => { server.close(); server.closeAllConnections(); };
  process.on('SIGINT', stop);
  process.on('SIGTERM', stop);
}
