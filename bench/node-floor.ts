/**
 * The floor a Node proxy can reach on this machine: node:http in, undici Pool dispatch out, no
 * routing, policies, metrics or logs. `bench/compare.ts` runs it beside Switchboard so the cost of
 * our own pipeline is told apart from the cost of Node's HTTP stack.
 *
 *   node bench/node-floor.ts <upstream port> <listen port>
 */
import http from 'node:http';
import { Pool, type Dispatcher } from 'undici';

const [upstreamPort, port] = process.argv.slice(2).map(Number);
if (!Number.isInteger(upstreamPort) || !Number.isInteger(port)) throw new Error('usage: node bench/node-floor.ts <upstream port> <listen port>');
const pool = new Pool(`http://127.0.0.1:${upstreamPort}`, { pipelining: 1 });

http.createServer((req, res) => {
  const headers: Record<string, string | string[]> = {};
  for (const name in req.headers) {
    const value = req.headers[name];
    if (value !== undefined && name !== 'connection' && name !== 'keep-alive') headers[name] = value;
  }
  pool.dispatch({ method: (req.method ?? 'GET') as Dispatcher.HttpMethod, path: req.url ?? '/', headers, body: null }, {
    onRequestStart() {},
    onResponseStart(_controller, status, upstreamHeaders) {
      delete upstreamHeaders.connection;
      delete upstreamHeaders['keep-alive'];
      res.writeHead(status, upstreamHeaders);
    },
    onResponseData(_controller, chunk) {
      res.write(chunk);
    },
    onResponseEnd() {
      res.end();
    },
    onResponseError(_controller, err) {
      res.destroy(err);
    },
  });
}).listen(port, '127.0.0.1');

process.on('SIGTERM', () => process.exit(0));
process.on('SIGINT', () => process.exit(0));
