import type { IncomingMessage } from 'node:http';
import { connect, type Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import { toErrorResponse, type ProxyError } from '../errors.ts';
import type { HeaderMap } from '../http/headers.ts';
import { accessLog, pathOnly } from '../telemetry/access-log.ts';
import type { BindContext } from './handle-request.ts';
import { viewOf } from './handle-request.ts';
import { resolveRequest, type Resolution } from './resolve.ts';
import type { Forward } from './exchange.ts';
import type { UpstreamTarget } from '../backends/backend.ts';
import { applyUpgradePolicies } from './upgrade-policies.ts';
import { admitRequest } from './admit.ts';
import type { PolicyContext } from '../policies/context.ts';

/** Bound on connecting to the upstream of an Upgrade request when the rule sets no timeout. */
const UPGRADE_CONNECT_TIMEOUT_MS = 10_000;

/**
 * HTTP/1.1 Upgrade (WebSocket and others): route like any request, open a raw connection to the
 * chosen endpoint, replay the request head, then pipe both sockets. The upstream's answer (101 or
 * a refusal) goes back byte for byte.
 */
export function handleUpgrade(ctx: BindContext, req: IncomingMessage, client: Duplex, head: Buffer): void {
  const started = performance.now();
  // The same entry checks as any request (admit.ts): Host rules, canonical path.
  const refused = admitRequest(req);
  const resolution: Resolution = refused
    ? { kind: 'error', error: refused, labels: { gateway: '', listener: '', route: '', backend: '' } }
    : resolveRequest(ctx.compiled, viewOf(req, ctx.scheme));
  const labels = resolution.labels;
  let bytes = 0;
  let logged = false;
  const done = (status: number) => {
    if (logged) return;
    logged = true;
    const seconds = (performance.now() - started) / 1000;
    ctx.telemetry.metrics.requestDone(labels, status, seconds);
    accessLog(ctx.telemetry.logger, { method: req.method ?? '', path: pathOnly(req.url), status, durationMs: Math.round(seconds * 1e4) / 10, route: labels.route, backend: labels.backend, bytes });
  };
  client.on('error', () => client.destroy());

  if (resolution.kind === 'error') return done(writeError(client, resolution.error));
  if (resolution.kind === 'redirect') {
    client.end(`HTTP/1.1 ${resolution.status} Redirect\r\nlocation: ${resolution.location}\r\ncontent-length: 0\r\nconnection: close\r\n\r\n`);
    return done(resolution.status);
  }

  const target = resolution.target;
  if (target === null) {
    // An in-process backend (LLM Realtime …) may take the upgrade itself, after the same policies.
    const handler = resolution.backend.handler;
    if (!handler?.upgrade) return done(writeError(client, { code: 'BAD_REQUEST', reason: 'this backend does not accept upgrade requests' }));
    const serve = (policy: PolicyContext | undefined) => handler.upgrade!(req, client, head, {
      labels, path: resolution.path, headers: resolution.headers, policy, backendPolicy: resolution.backendPolicy,
      done: (status, n) => {
        bytes += n;
        done(status);
      },
    });
    if (resolution.traffic !== undefined) return applyUpgradePolicies(req, client, resolution, ctx.scheme, ctx.telemetry.logger, serve, done);
    return serve(undefined);
  }
  // Policies guard WebSockets like any request (authentication must hold for upgrades too).
  if (resolution.traffic !== undefined) {
    const connectUpstream = () => forwardUpgrade(ctx, req, client, head, resolution, target, done, (n) => (bytes += n));
    return applyUpgradePolicies(req, client, resolution, ctx.scheme, ctx.telemetry.logger, connectUpstream, done);
  }
  forwardUpgrade(ctx, req, client, head, resolution, target, done, (n) => (bytes += n));
}

/** Opens the raw upstream connection, replays the request head and pipes both ways. */
function forwardUpgrade(
  ctx: BindContext,
  req: IncomingMessage,
  client: Duplex,
  head: Buffer,
  resolution: Forward,
  target: UpstreamTarget,
  done: (status: number) => void,
  count: (bytes: number) => void,
): void {
  const { backend, path, headers } = resolution;
  let logged = false;
  const settle = (status: number) => {
    logged = true;
    done(status);
  };
  const upstream = connect({ host: target.host, port: target.port });
  upstream.setNoDelay(true);
  const connectTimeout = resolution.rule.backendTimeoutMs ?? resolution.rule.requestTimeoutMs ?? UPGRADE_CONNECT_TIMEOUT_MS;
  const timer = setTimeout(() => {
    upstream.destroy();
    settle(writeError(client, { code: 'BACKEND_TIMEOUT', backend: backend.key }));
  }, connectTimeout);

  upstream.once('connect', () => {
    clearTimeout(timer);
    upstream.write(requestHead(req, path, headers));
    if (head.length > 0) upstream.write(head);
    upstream.once('data', (chunk: Buffer) => settle(statusOf(chunk)));
    upstream.on('data', (chunk: Buffer) => count(chunk.length));
    upstream.pipe(client);
    client.pipe(upstream);
  });
  upstream.on('error', (err: NodeJS.ErrnoException) => {
    clearTimeout(timer);
    if (upstream.connecting || !logged) {
      if (upstream.connecting) ctx.telemetry.metrics.connectError(backend.key);
      settle(writeError(client, { code: 'UPSTREAM_CONNECT_FAILED', backend: backend.key, cause: err.code ?? '' }));
    } else {
      client.destroy();
    }
  });
  upstream.on('close', () => client.destroy());
  client.on('close', () => {
    clearTimeout(timer);
    upstream.destroy();
    settle(499);
  });
}

function requestHead(req: IncomingMessage, path: string, headers: HeaderMap): string {
  let head = `${req.method ?? 'GET'} ${path} HTTP/1.1\r\n`;
  for (const name in headers) {
    const value = headers[name];
    for (const v of Array.isArray(value) ? value : [value]) head += `${name}: ${v}\r\n`;
  }
  // endToEndHeaders dropped the hop-by-hop pair; an upgrade is the one case that needs it.
  return `${head}connection: upgrade\r\nupgrade: ${String(req.headers.upgrade ?? '')}\r\n\r\n`;
}

/** `HTTP/1.1 101 …` → 101; anything unparseable counts as 502. */
function statusOf(chunk: Buffer): number {
  const status = Number(chunk.subarray(9, 12).toString('latin1'));
  return Number.isInteger(status) && status >= 100 ? status : 502;
}

function writeError(client: Duplex | Socket, error: ProxyError): number {
  const { status, body } = toErrorResponse(error);
  if (client.writable) {
    client.end(`HTTP/1.1 ${status} Error\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n\r\n${body}`);
  }
  return status;
}
