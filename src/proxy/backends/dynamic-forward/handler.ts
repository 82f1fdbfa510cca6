/**
 * The dynamic forward proxy backend (ProxyBackend `spec.dynamicForwardProxy`): each request goes
 * to the destination the client named (absolute-form target, else Host, else the TLS SNI), if the
 * backend's allow list names it, at an address the resolver checked (blocked classes refused,
 * docs/forward-proxy.md). Routing, traffic policies (authorization, rate limits …) ran before.
 * The connection is made to the checked IP itself, so the name is never resolved a second time.
 *
 * The backend policy applies through the same layer as on other kinds (policies/backend/forward.ts:
 * fail closed when invalid, extAuth, transformation, credentials) and its connection members
 * (connect.ts): `tcp` (connect deadline, keepalive), `tls` (origination to the destination with the
 * policy's CAs, client certificate, SNI and name checks), `tunnel` (chained through an upstream
 * CONNECT proxy), `http.requestTimeout`. A CONNECT tunnel applies `tcp` and `tunnel` only.
 */
import { request as httpRequest, type IncomingMessage } from 'node:http';
import type { Socket } from 'node:net';
import type { BackendHandler, HandlerFactory, HandlerRequest } from '../handlers.ts';
import type { DynamicForwardIR } from '../../../ir/dynamic-forward.ts';
import { requestBody, sendDirect, serverName, type DownstreamRequest, type DownstreamResponse } from '../../http/downstream.ts';
import { endToEndHeaders, endToEndResponseHeaders, type HeaderMap } from '../../http/headers.ts';
import { askedForHttps } from '../../http/absolute-form.ts';
import { splice, type TunnelClient } from '../../http/tunnel.ts';
import { renderGatewayError } from '../../http/error-format.ts';
import type { PolicyContext } from '../../policies/context.ts';
import { forwardWithBackendPolicy } from '../../policies/backend/forward.ts';
import type { CompiledBackendPolicy } from '../../policies/backend/compile.ts';
import type { UpstreamTarget } from '../../policies/backend/pools.ts';
import { RequestPolicyContext } from '../../policies/request-context.ts';
import type { AddressClass } from './address-classes.ts';
import { hostAllowed } from './allowed-hosts.ts';
import { forwardConnection, openForwardConnection, rawConnection, tunnelUnapplicable, type CheckedTarget, type ForwardConnection } from './connection.ts';
import { parseAuthority, requestDestination } from './destination.ts';
import { CheckedResolver } from './resolver.ts';

export const dynamicForwardHandlerFactory: HandlerFactory = (backend) =>
  backend.dynamicForward ? new DynamicForwardHandler(backend.dynamicForward) : undefined;

export class DynamicForwardHandler implements BackendHandler {
  readonly usesBackendPolicy = true;
  readonly #allowedHosts: readonly string[];
  readonly #allowedClasses: ReadonlySet<AddressClass>;
  readonly #resolver: CheckedResolver;

  constructor(ir: DynamicForwardIR, resolver = new CheckedResolver()) {
    this.#allowedHosts = ir.allowedHosts;
    this.#allowedClasses = new Set(ir.allowAddressClasses);
    this.#resolver = resolver;
  }

  handle(req: DownstreamRequest, res: DownstreamResponse, request: HandlerRequest): void {
    const runtime = request.backendRuntime;
    const sni = serverName(req);
    const authority = req.headers.host ?? (req.headers[':authority'] as string | undefined) ?? sni;
    // A client on a TLS connection, or asking for https:// (absolute-form), wants the destination
    // over TLS; a backend `tls` originates TLS whatever the client asked.
    const tls = askedForHttps(req) || sni !== undefined || runtime?.connection?.tls !== undefined;
    const destination = requestDestination(req.url ?? '/', authority, tls ? 443 : 80);
    if (!destination) return refuse(res, request, 400, 'bad_request', 'the request names no valid destination host');
    if (!hostAllowed(destination.host, this.#allowedHosts)) {
      return refuse(res, request, 403, 'destination_not_allowed', 'the forward proxy does not allow this destination');
    }
    this.#resolver.resolve(destination.host, this.#allowedClasses).then(
      (resolved) => {
        if (!resolved.ok) {
          if (resolved.reason === 'blocked') return refuse(res, request, 403, 'destination_blocked', 'the destination resolves to an address the forward proxy may not reach');
          return refuse(res, request, 502, 'upstream_connect_failed', 'could not resolve the destination');
        }
        const secure = tls || destination.tls === true;
        const port = destination.port;
        const bare = destination.host.includes(':') ? `[${destination.host}]` : destination.host;
        const hostHeader = port === (secure ? 443 : 80) ? bare : `${bare}:${port}`;
        const target: Target = { address: resolved.address, port, name: destination.host, hostHeader, connection: forwardConnection(runtime?.connection, secure) };
        if (runtime) forwardUnderPolicy(req, res, request, runtime, target);
        else forward(req, res, target, request.headers, request.path, request.policy, request.done, undefined);
      },
      () => refuse(res, request, 502, 'upstream_connect_failed', 'could not resolve the destination'),
    );
  }

  /**
   * CONNECT (frontend `connect.mode: Route`): the authority is the destination, under the same
   * allow list and address checks; the tunnel goes to the checked address, with the backend
   * policy's `tcp` and `tunnel`. This is how `curl -x` reaches `https://` destinations (TLS end to
   * end, the gateway sees only the tunnel).
   */
  tunnel(authority: string, client: TunnelClient, request: HandlerRequest): void {
    const refuseRaw = (status: number, code: string, message: string) => refuse(client.res, request, status, code, message);
    // A member that acts on HTTP or TLS has nothing to act on in an opaque tunnel: fail closed, never connected.
    const unapplicable = tunnelUnapplicable(request.backendPolicy);
    if (unapplicable.length > 0) return refuseRaw(500, 'backend_policy_unsupported', `backend policy ${unapplicable.join(', ')} cannot apply to a CONNECT tunnel`);
    if (request.backendRuntime && request.backendRuntime.invalid.length > 0) return refuseRaw(500, 'policy_invalid', 'a backend policy that applies to this route is invalid');
    const destination = parseAuthority(authority, 443);
    if (!destination) return refuseRaw(400, 'bad_request', 'the CONNECT target is not a valid host:port');
    if (!hostAllowed(destination.host, this.#allowedHosts)) return refuseRaw(403, 'destination_not_allowed', 'the forward proxy does not allow this destination');
    this.#resolver.resolve(destination.host, this.#allowedClasses).then(
      (resolved) => {
        if (!resolved.ok) {
          if (resolved.reason === 'blocked') return refuseRaw(403, 'destination_blocked', 'the destination resolves to an address the forward proxy may not reach');
          return refuseRaw(502, 'upstream_connect_failed', 'could not resolve the destination');
        }
        const target = { address: resolved.address, port: destination.port, name: destination.host };
        openForwardConnection(rawConnection(request.backendRuntime?.connection), target, (err, upstream) => {
          if (err || !upstream) return refuseRaw(502, 'upstream_connect_failed', 'could not connect to the upstream');
          splice(client, upstream, request.done);
        });
      },
      () => refuseRaw(502, 'upstream_connect_failed', 'could not resolve the destination'),
    );
  }

  async close(): Promise<void> {}
}

interface Target extends CheckedTarget {
  readonly hostHeader: string;
  readonly connection: ForwardConnection;
}

/** Stands in for a pool: the forward proxy connects per request (openForwardConnection), never through a dispatcher. */
const NO_POOL = undefined as unknown as UpstreamTarget['dispatcher'];

/**
 * The backend-policy layer every kind goes through (policies/backend/forward.ts): an invalid
 * policy answers 500 with nothing sent, extAuth and transformation run, credentials are written
 * (cloud signatures over the destination's Host), then the request is forwarded.
 */
function forwardUnderPolicy(req: DownstreamRequest, res: DownstreamResponse, request: HandlerRequest, runtime: CompiledBackendPolicy, target: Target): void {
  const context = request.policy instanceof RequestPolicyContext ? request.policy : undefined;
  // The pipeline makes a context whenever the policy needs one (handle-request.ts); without it, fail closed.
  if (runtime.needsContext && !context) return refuse(res, request, 500, 'backend_policy_failed', 'the backend policy could not be applied');
  const headers = request.headers as HeaderMap;
  headers.host = target.hostHeader;
  const upstream: UpstreamTarget = { dispatcher: NO_POOL, host: target.address, port: target.port, authority: target.hostHeader };
  forwardWithBackendPolicy(runtime, { target: upstream, headers, path: request.path, filters: {} }, context, request.done, {
    start: (fwd, done, ctx) => forward(req, res, target, fwd.headers, fwd.path, ctx, done, runtime.requestTimeoutMs),
    respond: (response, ctx) => {
      res.gatewayAnswer?.();
      return sendDirect(res, response, ctx?.responseMutations ?? []);
    },
    createContext: () => {
      throw new Error('unreachable: the pipeline made the policy context');
    },
  });
}

function forward(
  req: DownstreamRequest,
  res: DownstreamResponse,
  target: Target,
  upstreamHeaders: Readonly<Record<string, string | string[]>>,
  path: string,
  policy: PolicyContext | undefined,
  done: (status: number, bytes: number) => void,
  requestTimeoutMs: number | undefined,
): void {
  const headers = { ...endToEndHeaders(upstreamHeaders), host: target.hostHeader };
  let bytes = 0;
  let responseTimer: NodeJS.Timeout | undefined;
  let timedOut = false;
  const upstream = httpRequest({
    method: req.method,
    path,
    headers,
    setHost: false,
    // The socket comes from openForwardConnection: the checked IP, through the policy's tunnel and TLS.
    // node waits for `onCreate` when createConnection returns nothing; its typings want a socket.
    createConnection: (_options, onCreate: (err: Error | null, socket: Socket) => void) => {
      openForwardConnection(target.connection, target, (err, socket) => onCreate(err, socket as Socket));
      return undefined as unknown as Socket;
    },
  });
  // A socket out of a tunnel proxy comes paused (openTunnel read the proxy's answer); node's client
  // has its listeners on it once 'socket' fires, so it flows from there.
  upstream.once('socket', (socket: Socket) => socket.resume());
  if (requestTimeoutMs !== undefined) {
    // http.requestTimeout: the destination's response head must come in time, else 504.
    responseTimer = setTimeout(() => {
      timedOut = true;
      upstream.destroy();
      if (!res.headersSent) refuse(res, { done }, 504, 'backend_timeout', 'the destination did not answer in time');
    }, requestTimeoutMs);
  }
  upstream.on('response', (answer: IncomingMessage) => {
    clearTimeout(responseTimer);
    const status = answer.statusCode ?? 502;
    res.writeHead(status, endToEndResponseHeaders(answer.headers));
    answer.on('data', (chunk: Buffer) => {
      bytes += chunk.length;
      if (!res.write(chunk)) {
        answer.pause();
        res.once('drain', () => answer.resume());
      }
    });
    answer.on('end', () => {
      res.end();
      done(status, bytes);
    });
    answer.on('error', () => {
      res.destroy();
      done(status, bytes);
    });
  });
  upstream.on('error', () => {
    clearTimeout(responseTimer);
    if (timedOut) return;
    if (res.headersSent) {
      res.destroy();
      return;
    }
    refuse(res, { done }, 502, 'upstream_connect_failed', 'could not connect to the upstream');
  });
  res.on('close', () => {
    clearTimeout(responseTimer);
    upstream.destroy();
  });
  // A traffic or backend policy that read the body (extAuth forwardBody, transformation …) holds it buffered.
  const buffered = policy instanceof RequestPolicyContext ? policy.bufferedBody : undefined;
  if (buffered !== undefined) upstream.end(buffered);
  else {
    const body = requestBody(req);
    if (body) body.pipe(upstream);
    else upstream.end();
  }
}

/** The gateway's own refusal, in the gateway's error shape (docs/errors.md). */
function refuse(res: DownstreamResponse | TunnelClient['res'], request: Pick<HandlerRequest, 'done'>, status: number, code: string, message: string): void {
  const downstream = res as DownstreamResponse;
  downstream.gatewayAnswer?.();
  const body = renderGatewayError(status, { code, message }, 'gateway');
  downstream.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
  downstream.end(body);
  request.done(status, Buffer.byteLength(body));
}
