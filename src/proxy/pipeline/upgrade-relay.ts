/**
 * The upstream leg of an Upgrade request to a Service/static backend: a connection made with the
 * backend policy's settings (tcp connect timeout and keepalive, TLS origination with its SNI, CA,
 * client certificate and verification, ALPN pinned to http/1.1, a CONNECT tunnel), the request
 * head replayed with the headers the policies and backend credentials produced, and the upstream's
 * answer head read, given the request's response effects and written to the client. On 101 both
 * sockets are piped; any other answer is relayed as a refusal and both sides close, and nothing
 * the client sent after its request head reaches the upstream.
 */
import type { ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import { validateHeaderName, validateHeaderValue } from 'node:http';
import type { buildConnector } from 'undici';
import { connectorFor, type ConnectionSettings } from '../policies/backend/connection.ts';
import { clientFormat } from '../backends/client-format.ts';
import { isConnectFailure, upstreamFailure, type ProxyError } from '../http/errors.ts';
import type { HeaderMap } from '../http/headers.ts';
import type { RequestPolicyContext } from '../policies/request-context.ts';
import { rewrittenHost } from '../policies/traffic/host-rewrite/host.ts';
import { CLIENT_CLOSED, type Telemetry, type UpstreamForward } from './exchange.ts';
import { sendGatewayError, type DownstreamRequest } from '../http/downstream.ts';
import { applyHeadEffects, headEnd, MAX_RESPONSE_HEAD_BYTES, parseResponseHead, serializeResponseHead } from './response-head.ts';

/** Deadline for the upstream's answer head (connect included) when no route or policy sets one. */
export const UPGRADE_HEAD_TIMEOUT_MS = 10_000;

/** Without a backend policy: plain TCP with undici's keepalive. */
const PLAIN: ConnectionSettings = { fingerprint: 'upgrade', version: 'http1', tls: undefined, connectTimeoutMs: undefined, keepaliveMs: undefined, tunnel: undefined };

export interface UpgradeRelayRequest {
  readonly req: DownstreamRequest;
  readonly client: Duplex;
  /** Bytes the client sent after its request head (node's `head`). */
  readonly head: Buffer;
  /** Writes gateway answers on the client socket until the upstream's head is relayed. */
  readonly res: ServerResponse;
  readonly fwd: UpstreamForward;
  readonly policy: RequestPolicyContext | undefined;
  readonly connection: ConnectionSettings | undefined;
  readonly telemetry: Telemetry;
  readonly done: (status: number, bytes: number) => void;
}

export function relayUpgrade(r: UpgradeRelayRequest): void {
  const { req, client, res, fwd, policy } = r;
  const backend = fwd.backend.key;
  let finished = false;
  let upstream: Socket | undefined;
  const finish = (status: number, bytes: number) => {
    if (finished) return;
    finished = true;
    clearTimeout(timer);
    r.done(status, bytes);
  };
  const fail = (error: ProxyError) => {
    if (finished) return;
    upstream?.destroy();
    finish(sendGatewayError(res, error, policy?.responseMutations ?? [], clientFormat(fwd.clientFormat, fwd.path, req.headers)), 0);
  };

  const deadline = headDeadline(fwd, policy);
  const timer = setTimeout(() => fail(deadline.error), Math.max(deadline.ms, 0));
  let requestHead: Buffer;
  try {
    requestHead = serializeRequestHead(req, fwd.path, upgradeHeaders(req, fwd, policy));
  } catch (err) {
    // A policy or filter produced a header node would refuse to send (the Exchange fails the same way).
    fail({ code: 'INTERNAL', cause: String(err) });
    return;
  }
  client.once('close', () => {
    if (finished) return;
    upstream?.destroy();
    finish(CLIENT_CLOSED, 0);
  });

  // WebSocket is HTTP/1.1 (RFC 6455): ALPN offers only http/1.1; without a tcp.connectTimeout the head deadline bounds the connect too.
  const base = r.connection ?? PLAIN;
  const settings: ConnectionSettings = { ...base, version: 'http1', connectTimeoutMs: base.connectTimeoutMs ?? Math.max(deadline.ms, 1) };
  const { host, port } = fwd.target;
  const options = { hostname: host, host, port: String(port), protocol: settings.tls ? 'https:' : 'http:' } as buildConnector.Options;
  connectorFor(settings, host)(options, (err, socket) => {
    if (err || !socket) {
      const failure = upstreamFailure(backend, err);
      if (isConnectFailure(failure)) r.telemetry.metrics.connectError(backend);
      fail(failure);
      return;
    }
    upstream = socket as Socket;
    if (finished) {
      upstream.destroy();
      return;
    }
    upstream.on('error', () => fail({ code: 'UPSTREAM_RESET', backend, cause: 'connection error' }));
    upstream.write(requestHead);
    readAnswerHead(upstream);
  });

  const readAnswerHead = (socket: Socket) => {
    let buffered: Buffer = Buffer.alloc(0);
    const onData = (chunk: Buffer) => {
      buffered = Buffer.concat([buffered, chunk]);
      const at = headEnd(buffered);
      if ((at < 0 ? buffered.length : at) > MAX_RESPONSE_HEAD_BYTES) return fail({ code: 'UPSTREAM_RESET', backend, cause: 'response head too long' });
      if (at < 0) return;
      socket.off('data', onData);
      socket.off('end', onEnd);
      answered(socket, buffered.subarray(0, at), buffered.subarray(at));
    };
    const onEnd = () => fail({ code: 'UPSTREAM_RESET', backend, cause: 'closed before answering' });
    socket.on('data', onData);
    socket.once('end', onEnd);
  };

  const answered = (socket: Socket, rawHead: Buffer, rest: Buffer) => {
    const parsed = parseResponseHead(rawHead);
    if (!parsed) return fail({ code: 'UPSTREAM_RESET', backend, cause: 'invalid response head' });
    const upgraded = parsed.status === 101;
    const head = applyHeadEffects(parsed, { filters: fwd.filters, mutations: policy?.responseMutations });
    // A refusal ends the exchange: the client may not reuse a raw connection nothing routes.
    if (!upgraded) head.headers.connection = 'close';
    let bytes: Buffer;
    try {
      bytes = serializeResponseHead(head);
    } catch (err) {
      r.telemetry.logger.warn({ err: (err as Error).message, backend }, 'invalid upstream response headers');
      return fail({ code: 'UPSTREAM_RESET', backend, cause: 'invalid response headers' });
    }
    if (finished || client.destroyed) return void socket.destroy();
    clearTimeout(timer);
    res.detachSocket(client as Socket);
    client.write(bytes);
    if (rest.length > 0) client.write(rest);
    socket.on('error', () => client.destroy());
    client.on('error', () => socket.destroy());
    socket.on('close', () => client.destroy());
    client.on('close', () => socket.destroy());
    if (upgraded) {
      finish(101, 0);
      // Bytes the client sent after its request head belong to the upgraded protocol: they go on only after a 101,
      // so a refused upgrade cannot carry a second request past routing and policies.
      if (r.head.length > 0) socket.write(r.head);
      socket.pipe(client);
      client.pipe(socket);
      return;
    }
    relayRefusal(socket, head.headers['content-length'], rest.length, parsed.status);
  };

  /** The refusal's body goes to the client, then both close; the client's bytes never reach the upstream. */
  const relayRefusal = (socket: Socket, length: string | string[] | undefined, already: number, status: number) => {
    const expected = typeof length === 'string' && /^\d+$/.test(length) ? Number(length) : undefined;
    let sent = already;
    const close = () => {
      finish(status, sent);
      client.end();
      socket.destroy();
    };
    if (expected !== undefined && sent >= expected) return close();
    socket.on('data', (chunk: Buffer) => {
      sent += chunk.length;
      client.write(chunk);
      if (expected !== undefined && sent >= expected) close();
    });
    socket.once('end', close);
    // Either side going away ends it too (a chunked or unframed refusal ends only with the connection).
    socket.once('close', close);
  };
}

/** The earliest of the deadlines that bound the upstream's answer, with the error it gives. */
function headDeadline(fwd: UpstreamForward, policy: RequestPolicyContext | undefined): { ms: number; error: ProxyError } {
  const backendTimeout: ProxyError = { code: 'BACKEND_TIMEOUT', backend: fwd.backend.key };
  const requestMs = fwd.traffic?.requestTimeoutMs ?? fwd.rule.requestTimeoutMs;
  const candidates: { ms: number | undefined; error: ProxyError }[] = [
    // Fault-injected delays already spent part of the request timeout (SPEC.md traffic.delay).
    { ms: requestMs === undefined ? undefined : requestMs - (policy?.upstream.delayedMs ?? 0), error: { code: 'REQUEST_TIMEOUT' } },
    { ms: fwd.rule.backendTimeoutMs, error: backendTimeout },
    { ms: fwd.backendRuntime?.requestTimeoutMs, error: backendTimeout },
  ];
  let best: { ms: number; error: ProxyError } | undefined;
  for (const c of candidates) if (c.ms !== undefined && (best === undefined || c.ms < best.ms)) best = { ms: c.ms, error: c.error };
  return best ?? { ms: UPGRADE_HEAD_TIMEOUT_MS, error: backendTimeout };
}

/**
 * The upstream request headers: the route's, with traffic.hostRewrite applied as the Exchange
 * applies it (Auto: the destination's authority, None: the client's; a URLRewrite hostname wins).
 */
function upgradeHeaders(req: DownstreamRequest, fwd: UpstreamForward, policy: RequestPolicyContext | undefined): HeaderMap {
  const mode = policy?.upstream.hostRewrite;
  if (mode === undefined || fwd.filters.rewrite?.hostname) return fwd.headers;
  const host = rewrittenHost(mode, fwd.target.authority, (req.headers[':authority'] as string | undefined) ?? req.headers.host);
  return host === undefined ? fwd.headers : { ...fwd.headers, host };
}

/** The upgrade request as the upstream gets it; throws on anything node would refuse to send. */
function serializeRequestHead(req: DownstreamRequest, path: string, headers: HeaderMap): Buffer {
  // The target went through admit.ts and rewrites; a control character or space here would split the request line.
  for (let i = 0; i < path.length; i++) {
    const c = path.charCodeAt(i);
    if (c <= 0x20 || c === 0x7f) throw new Error('invalid upstream request target');
  }
  let head = `${req.method ?? 'GET'} ${path} HTTP/1.1\r\n`;
  for (const name in headers) {
    const value = headers[name];
    validateHeaderName(name);
    for (const v of Array.isArray(value) ? value : [value]) {
      validateHeaderValue(name, v);
      head += `${name}: ${v}\r\n`;
    }
  }
  // endToEndHeaders dropped the hop-by-hop pair; an upgrade is the one case that needs it.
  const protocol = String(req.headers.upgrade ?? '');
  validateHeaderValue('upgrade', protocol);
  return Buffer.from(`${head}connection: upgrade\r\nupgrade: ${protocol}\r\n\r\n`, 'latin1');
}
