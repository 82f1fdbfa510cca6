/**
 * The dynamic forward proxy backend (ProxyBackend `spec.dynamicForwardProxy`): each request goes
 * to the destination the client named (absolute-form target, else Host, else the TLS SNI), if the
 * backend's allow list names it, at an address the resolver checked (blocked classes refused,
 * docs/forward-proxy.md). Routing, traffic policies (authorization, rate limits …) ran before.
 * The connection is made to the checked IP itself, so the name is never resolved a second time.
 */
import { request as httpRequest, type IncomingMessage } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { connect as netConnect, isIP } from 'node:net';
import type { BackendHandler, HandlerFactory, HandlerRequest } from '../handlers.ts';
import type { DynamicForwardIR } from '../../../ir/dynamic-forward.ts';
import { BACKEND_MEMBERS, type BackendPolicy } from '../../../ir/policy.ts';
import { requestBody, serverName, type DownstreamRequest, type DownstreamResponse } from '../../http/downstream.ts';
import { endToEndHeaders, endToEndResponseHeaders } from '../../http/headers.ts';
import { askedForHttps } from '../../http/absolute-form.ts';
import { splice, type TunnelClient } from '../../http/tunnel.ts';
import { renderGatewayError } from '../../http/error-format.ts';
import { RequestPolicyContext } from '../../policies/request-context.ts';
import type { AddressClass } from './address-classes.ts';
import { hostAllowed } from './allowed-hosts.ts';
import { parseAuthority, requestDestination } from './destination.ts';
import { CheckedResolver } from './resolver.ts';

/** How long connecting to a destination may take (no backend `tcp.connectTimeout` applies here yet). */
export const FORWARD_CONNECT_TIMEOUT_MS = 10_000;

export const dynamicForwardHandlerFactory: HandlerFactory = (backend) =>
  backend.dynamicForward ? new DynamicForwardHandler(backend.dynamicForward) : undefined;

export class DynamicForwardHandler implements BackendHandler {
  readonly #allowedHosts: readonly string[];
  readonly #allowedClasses: ReadonlySet<AddressClass>;
  readonly #resolver: CheckedResolver;

  constructor(ir: DynamicForwardIR, resolver = new CheckedResolver()) {
    this.#allowedHosts = ir.allowedHosts;
    this.#allowedClasses = new Set(ir.allowAddressClasses);
    this.#resolver = resolver;
  }

  handle(req: DownstreamRequest, res: DownstreamResponse, request: HandlerRequest): void {
    // Backend policy members (tls, auth, timeouts …) are not applied here yet: refuse rather than
    // send without the credential or check a policy asks for (fails closed, docs/forward-proxy.md).
    const unapplied = unappliedMembers(request.backendPolicy);
    if (unapplied.length > 0) {
      return refuse(res, request, 500, 'backend_policy_unsupported', `backend policy ${unapplied.join(', ')} is not applied on a dynamic forward proxy backend yet`);
    }
    const sni = serverName(req);
    const authority = req.headers.host ?? (req.headers[':authority'] as string | undefined) ?? sni;
    // A client on a TLS connection, or asking for https:// (absolute-form), wants the destination over TLS.
    const tls = askedForHttps(req) || sni !== undefined;
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
        const port = destination.port;
        const bare = destination.host.includes(':') ? `[${destination.host}]` : destination.host;
        const hostHeader = port === (tls ? 443 : 80) ? bare : `${bare}:${port}`;
        forward(req, res, request, { address: resolved.address, port, host: destination.host, hostHeader, tls: tls || destination.tls === true });
      },
      () => refuse(res, request, 502, 'upstream_connect_failed', 'could not resolve the destination'),
    );
  }

  /**
   * CONNECT (frontend `connect.mode: Route`): the authority is the destination, under the same
   * allow list and address checks; the tunnel goes to the checked address. This is how `curl -x`
   * reaches `https://` destinations (TLS end to end, the gateway sees only the SNI-less tunnel).
   */
  tunnel(authority: string, client: TunnelClient, request: HandlerRequest): void {
    const refuseRaw = (status: number, code: string, message: string) => refuse(client.res, request, status, code, message);
    const destination = parseAuthority(authority, 443);
    if (!destination) return refuseRaw(400, 'bad_request', 'the CONNECT target is not a valid host:port');
    if (!hostAllowed(destination.host, this.#allowedHosts)) return refuseRaw(403, 'destination_not_allowed', 'the forward proxy does not allow this destination');
    this.#resolver.resolve(destination.host, this.#allowedClasses).then(
      (resolved) => {
        if (!resolved.ok) {
          if (resolved.reason === 'blocked') return refuseRaw(403, 'destination_blocked', 'the destination resolves to an address the forward proxy may not reach');
          return refuseRaw(502, 'upstream_connect_failed', 'could not resolve the destination');
        }
        const upstream = netConnect({ host: resolved.address, port: destination.port, timeout: FORWARD_CONNECT_TIMEOUT_MS });
        const failed = () => {
          upstream.destroy();
          refuseRaw(502, 'upstream_connect_failed', 'could not connect to the upstream');
        };
        upstream.once('error', failed);
        upstream.once('timeout', failed);
        upstream.once('connect', () => {
          upstream.off('error', failed);
          upstream.off('timeout', failed);
          upstream.setTimeout(0);
          splice(client, upstream, request.done);
        });
      },
      () => refuseRaw(502, 'upstream_connect_failed', 'could not resolve the destination'),
    );
  }

  async close(): Promise<void> {}
}

interface Target {
  /** The checked IP the connection is made to. */
  readonly address: string;
  readonly port: number;
  /** The name the client asked for: TLS SNI and certificate verification use it. */
  readonly host: string;
  readonly hostHeader: string;
  readonly tls: boolean;
}

function forward(req: DownstreamRequest, res: DownstreamResponse, request: HandlerRequest, target: Target): void {
  const headers = { ...endToEndHeaders(request.headers), host: target.hostHeader };
  const options = { host: target.address, port: target.port, method: req.method, path: request.path, headers, setHost: false };
  // TLS to the checked IP, with the asked-for name as SNI and as the name the certificate must carry (system CAs).
  const upstream = target.tls
    ? httpsRequest({ ...options, servername: isIP(target.host) === 0 ? target.host : undefined })
    : httpRequest(options);
  const connectTimer = setTimeout(() => upstream.destroy(new Error('connect timeout')), FORWARD_CONNECT_TIMEOUT_MS);
  upstream.once('socket', (socket) => socket.once(target.tls ? 'secureConnect' : 'connect', () => clearTimeout(connectTimer)));
  upstream.once('close', () => clearTimeout(connectTimer));
  let bytes = 0;
  upstream.on('response', (answer: IncomingMessage) => {
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
      request.done(status, bytes);
    });
    answer.on('error', () => {
      res.destroy();
      request.done(status, bytes);
    });
  });
  upstream.on('error', () => {
    if (res.headersSent) {
      res.destroy();
      return;
    }
    refuse(res, request, 502, 'upstream_connect_failed', 'could not connect to the upstream');
  });
  res.on('close', () => upstream.destroy());
  // A traffic policy that read the body (extAuth forwardBody, transformation …) holds it buffered.
  const buffered = request.policy instanceof RequestPolicyContext ? request.policy.bufferedBody : undefined;
  if (buffered !== undefined) upstream.end(buffered);
  else {
    const body = requestBody(req);
    if (body) body.pipe(upstream);
    else upstream.end();
  }
}

function unappliedMembers(policy: BackendPolicy | undefined): string[] {
  if (!policy) return [];
  const out: string[] = BACKEND_MEMBERS.filter((m) => policy[m] !== undefined);
  if (policy.invalid !== undefined && policy.invalid.length > 0) out.push('(invalid)');
  return out;
}

/** The gateway's own refusal, in the gateway's error shape (docs/errors.md). */
function refuse(res: DownstreamResponse, request: HandlerRequest, status: number, code: string, message: string): void {
  res.gatewayAnswer?.();
  const body = renderGatewayError(status, { code, message }, 'gateway');
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
  res.end(body);
  request.done(status, Buffer.byteLength(body));
}
