import type { IncomingMessage, Server as Http1Server, ServerResponse } from 'node:http';
import type { Http2SecureServer, Http2Server, Http2Session, Http2Stream } from 'node:http2';
import type { Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import type { DownstreamResponse } from '../../http/downstream.ts';
import type { CompiledFrontend } from './compile.ts';
import { watchHeaderCase } from './header-case.ts';

/** SPEC.md defaults for HTTP/1: 100 headers, 10 minutes idle. */
const DEFAULT_HTTP1_MAX_HEADERS = 100;
const DEFAULT_HTTP1_IDLE_MS = 600_000;

/** Settings a running server can take at any time: applied when the bind opens and on every swap. */
export function applyServerSettings(http1: Http1Server | undefined, h2: Http2Server | Http2SecureServer, frontend: CompiledFrontend | undefined): void {
  if (http1) {
    http1.maxHeadersCount = frontend?.http.http1MaxHeaders ?? DEFAULT_HTTP1_MAX_HEADERS;
    http1.keepAliveTimeout = frontend?.http.http1IdleTimeoutMs ?? DEFAULT_HTTP1_IDLE_MS;
  }
  const settings = frontend?.http.http2Settings;
  if (settings && Object.keys(settings).length > 0) h2.updateSettings(settings);
}

/** Per HTTP/2 session: connection window, keepalive pings (closing an unanswered session), max duration. */
export function watchSession(session: Http2Session, frontend: CompiledFrontend | undefined): void {
  const http = frontend?.http;
  if (!http) return;
  const timers: NodeJS.Timeout[] = [];
  if (http.http2ConnectionWindowBytes !== undefined) {
    session.once('connect', () => session.setLocalWindowSize(http.http2ConnectionWindowBytes as number));
  }
  const interval = http.http2KeepaliveIntervalMs;
  if (interval !== undefined && interval > 0) {
    const timeoutMs = http.http2KeepaliveTimeoutMs ?? interval;
    const pinger = setInterval(() => {
      const deadline = setTimeout(() => session.destroy(), timeoutMs);
      const sent = session.ping(() => clearTimeout(deadline));
      if (!sent) clearTimeout(deadline);
    }, interval);
    pinger.unref();
    timers.push(pinger);
  }
  if (http.maxConnectionDurationMs !== undefined && http.maxConnectionDurationMs > 0) {
    // Graceful: GOAWAY, in-flight streams finish.
    const ending = setTimeout(() => session.close(), http.maxConnectionDurationMs);
    ending.unref();
    timers.push(ending);
  }
  session.once('close', () => timers.forEach((t) => clearTimeout(t)));
}

/**
 * The idle timeout of HTTP/2 sessions, h2 and h2c: SPEC.md has no HTTP/2-specific field, so the
 * listener's `http1IdleTimeout` (default 10 minutes) applies. A session with no open stream for
 * that long gets GOAWAY and is closed; PINGs do not count as activity, an open stream (a quiet SSE
 * stream too) keeps the session. 0 disables it, as it does for HTTP/1.
 */
export function closeIdleSession(session: Http2Session, frontend: CompiledFrontend | undefined): void {
  const idleMs = frontend?.http.http1IdleTimeoutMs ?? DEFAULT_HTTP1_IDLE_MS;
  if (idleMs <= 0) return;
  let open = 0;
  let timer: NodeJS.Timeout | undefined;
  const arm = () => {
    timer = setTimeout(() => session.close(), idleMs);
    timer.unref();
  };
  arm();
  session.on('stream', (stream: Http2Stream) => {
    open++;
    clearTimeout(timer);
    stream.once('close', () => {
      if (--open === 0 && !session.closed && !session.destroyed) arm();
    });
  });
  session.once('close', () => clearTimeout(timer));
}

const expired = new WeakSet<Socket>();
const inFlight = new WeakMap<Socket, number>();

/**
 * Per HTTP/1 connection: `http1HeaderCase` (header-case.ts), and maxConnectionDuration — after it,
 * the connection closes once its current response is done.
 */
export function limitHttp1Connection(socket: Socket, frontend: CompiledFrontend | undefined): void {
  watchHeaderCase(socket, frontend);
  const ms = frontend?.http.maxConnectionDurationMs;
  if (ms === undefined || ms <= 0) return;
  const timer = setTimeout(() => {
    expired.add(socket);
    if ((inFlight.get(socket) ?? 0) === 0) socket.end();
  }, ms);
  timer.unref();
  socket.once('close', () => clearTimeout(timer));
}

/** Installed on the HTTP/1 server next to the request handler: counts responses per connection. */
export function trackHttp1Request(req: IncomingMessage, res: ServerResponse): void {
  const socket = req.socket;
  if (expired.has(socket)) res.shouldKeepAlive = false;
  inFlight.set(socket, (inFlight.get(socket) ?? 0) + 1);
  res.once('finish', () => {
    const left = (inFlight.get(socket) ?? 1) - 1;
    inFlight.set(socket, left);
    if (left === 0 && expired.has(socket)) socket.end();
  });
}

const METHOD_NOT_ALLOWED = JSON.stringify({ error: { code: 'method_not_allowed', message: 'CONNECT is not allowed on this listener' } });

/** CONNECT over HTTP/1 (node hands it over as a raw socket): 405 and close. */
export function refuseConnectSocket(socket: Duplex): void {
  socket.end(`HTTP/1.1 405 Method Not Allowed\r\ncontent-type: application/json\r\ncontent-length: ${METHOD_NOT_ALLOWED.length}\r\nconnection: close\r\n\r\n${METHOD_NOT_ALLOWED}`);
}

/** CONNECT over HTTP/2 (an ordinary stream). */
export function refuseConnectStream(res: DownstreamResponse): void {
  (res as ServerResponse).writeHead(405, { 'content-type': 'application/json' }).end(METHOD_NOT_ALLOWED);
}
