/**
 * An echo upstream for end-to-end tests: it answers every request with JSON describing what it
 * saw, so a test can check routing (which `server` answered), rewrites (path, host), header
 * filters and body forwarding. One port speaks HTTP/1.1 and HTTP/2 with prior knowledge (h2c):
 * the first bytes of a connection choose the protocol, the way an h2c-capable backend behaves.
 *
 * Query parameters steer the answer so timeouts and failures can be provoked on purpose:
 *   `?delay=<ms>`        wait before answering (capped at 10 s so a broken test cannot hang)
 *   `?reset=1`           destroy the connection instead of answering
 *   `?status=<code>`     answer with that status
 *   `?respHeader=n:v`    add a response header (repeatable)
 */
import { createHash } from 'node:crypto';
import http from 'node:http';
import http2 from 'node:http2';
import net from 'node:net';
import type { AddressInfo } from 'node:net';

/** What the echo server saw, exactly as it is sent back in the response body. */
export interface EchoRecord {
  server: string;
  protocol: 'HTTP/1.1' | 'HTTP/2';
  method: string;
  path: string;
  query: Record<string, string | string[]>;
  /** Header names lowercased; HTTP/2 pseudo-headers are left out (`host` carries `:authority`). */
  headers: Record<string, string | string[]>;
  host: string;
  bodyLength: number;
  bodySha256: string;
}

export interface EchoServer {
  readonly name: string;
  readonly host: '127.0.0.1';
  readonly port: number;
  /** Every request answered or reset so far, oldest first. */
  readonly seen: readonly EchoRecord[];
  /** Resolves once `count` requests have been seen, or rejects after `timeoutMs`. */
  waitForRequests(count: number, timeoutMs?: number): Promise<readonly EchoRecord[]>;
  close(): Promise<void>;
}

const MAX_DELAY_MS = 10_000;
const HTTP2_PREFACE_START = Buffer.from('PRI ');

export async function startEchoServer(name: string): Promise<EchoServer> {
  const seen: EchoRecord[] = [];
  const waiters = new Set<() => void>();
  const record = (r: EchoRecord): void => {
    seen.push(r);
    for (const wake of waiters) wake();
  };

  const h1 = http.createServer((req, res) => {
    const view: RequestView = { method: req.method ?? 'GET', url: req.url ?? '/', headers: req.headers, body: req };
    void answer(name, 'HTTP/1.1', view, record, {
      reset: () => req.socket.destroy(),
      send: (status, headers, body) => res.writeHead(status, headers).end(body),
    });
  });
  const h2 = http2.createServer();
  h2.on('stream', (stream, headers) => {
    const req = http2RequestView(stream, headers);
    void answer(name, 'HTTP/2', req, record, {
      reset: () => stream.close(http2.constants.NGHTTP2_INTERNAL_ERROR),
      send: (status, hdrs, body) => {
        stream.respond({ ':status': status, ...hdrs });
        stream.end(body);
      },
    });
  });
  h2.on('sessionError', () => {});

  const sockets = new Set<net.Socket>();
  const front = net.createServer((socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => {});
    dispatchByPreface(socket, h1, h2);
  });
  await new Promise<void>((resolve) => front.listen(0, '127.0.0.1', resolve));
  const port = (front.address() as AddressInfo).port;

  return {
    name,
    host: '127.0.0.1',
    port,
    seen,
    waitForRequests(count, timeoutMs = 5_000) {
      if (seen.length >= count) return Promise.resolve(seen.slice());
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => {
          waiters.delete(check);
          reject(new Error(`echo ${name}: saw ${seen.length} of ${count} requests within ${timeoutMs} ms`));
        }, timeoutMs);
        const check = (): void => {
          if (seen.length < count) return;
          clearTimeout(timer);
          waiters.delete(check);
          resolve(seen.slice());
        };
        waiters.add(check);
      });
    },
    async close() {
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => front.close(() => resolve()));
      h1.close();
      h2.close();
    },
  };
}

/** Reads the first bytes and hands the socket to the HTTP/2 server if they open the h2 preface. */
function dispatchByPreface(socket: net.Socket, h1: http.Server, h2: http2.Http2Server): void {
  let head = Buffer.alloc(0);
  const onData = (chunk: Buffer): void => {
    head = Buffer.concat([head, chunk]);
    if (head.length < HTTP2_PREFACE_START.length && HTTP2_PREFACE_START.subarray(0, head.length).equals(head)) return;
    socket.off('data', onData);
    if (head.subarray(0, HTTP2_PREFACE_START.length).equals(HTTP2_PREFACE_START)) {
      // The HTTP/2 session drains whatever is already buffered on the socket when it starts.
      socket.pause();
      socket.unshift(head);
      h2.emit('connection', socket);
    } else {
      // The HTTP/1 parser reads the handle directly; bytes already read are fed as a data event.
      h1.emit('connection', socket);
      socket.emit('data', head);
    }
  };
  socket.on('data', onData);
}

interface RequestView {
  method: string;
  url: string;
  headers: Record<string, string | string[] | undefined>;
  body: AsyncIterable<Buffer>;
}

interface Responder {
  reset(): void;
  send(status: number, headers: Record<string, string | string[]>, body: string): void;
}

function http2RequestView(stream: http2.ServerHttp2Stream, headers: http2.IncomingHttpHeaders): RequestView {
  const plain: Record<string, string | string[] | undefined> = {};
  for (const [k, v] of Object.entries(headers)) if (!k.startsWith(':')) plain[k] = v;
  plain.host = String(headers[':authority'] ?? headers.host ?? '');
  return { method: String(headers[':method']), url: String(headers[':path']), headers: plain, body: stream };
}

async function answer(
  name: string,
  protocol: EchoRecord['protocol'],
  req: RequestView,
  record: (r: EchoRecord) => void,
  res: Responder,
): Promise<void> {
  const hash = createHash('sha256');
  let bodyLength = 0;
  try {
    for await (const chunk of req.body) {
      hash.update(chunk);
      bodyLength += chunk.length;
    }
  } catch {
    return; // the client went away mid-body; nothing to answer
  }
  const url = new URL(req.url, 'http://echo.invalid');
  const headers: Record<string, string | string[]> = {};
  for (const [k, v] of Object.entries(req.headers)) if (v !== undefined) headers[k] = v;
  const seen: EchoRecord = {
    server: name,
    protocol,
    method: req.method,
    path: url.pathname,
    query: queryObject(url.searchParams),
    headers,
    host: String(req.headers.host ?? ''),
    bodyLength,
    bodySha256: hash.digest('hex'),
  };
  record(seen);

  const delay = Math.min(Number(url.searchParams.get('delay') ?? 0) || 0, MAX_DELAY_MS);
  if (delay > 0) await new Promise((resolve) => setTimeout(resolve, delay));
  if (url.searchParams.get('reset') === '1') return res.reset();

  const status = Number(url.searchParams.get('status') ?? 200) || 200;
  const responseHeaders: Record<string, string | string[]> = { 'content-type': 'application/json', 'x-echo-server': name };
  for (const spec of url.searchParams.getAll('respHeader')) {
    const colon = spec.indexOf(':');
    if (colon > 0) appendHeader(responseHeaders, spec.slice(0, colon).toLowerCase(), spec.slice(colon + 1));
  }
  res.send(status, responseHeaders, JSON.stringify(seen));
}

function queryObject(params: URLSearchParams): Record<string, string | string[]> {
  const out: Record<string, string | string[]> = {};
  for (const key of new Set(params.keys())) {
    const all = params.getAll(key);
    out[key] = all.length === 1 ? all[0] : all;
  }
  return out;
}

function appendHeader(headers: Record<string, string | string[]>, name: string, value: string): void {
  const prev = headers[name];
  headers[name] = prev === undefined ? value : [...(Array.isArray(prev) ? prev : [prev]), value];
}
