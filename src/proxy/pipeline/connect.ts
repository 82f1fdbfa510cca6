/**
 * Frontend `connect.mode: Route` (SPEC.md): a CONNECT request — HTTP/1.1, or an HTTP/2 CONNECT
 * stream (RFC 9113 §8.5), on plain and HTTPS binds — walks the same lifecycle as every request
 * (handle-request.ts `runLifecycle`: admit, PreRouting policies, route matching by the CONNECT
 * authority as the host, PostRouting policies such as authorization and rate limits), and its
 * backend phase opens a raw TCP tunnel after `200`: to an endpoint of the routed backend, or, for
 * an in-process backend that can tunnel (the dynamic forward proxy), to the destination that
 * backend checks. Refusals before the tunnel are ordinary HTTP answers (on the raw socket for
 * HTTP/1.1, as on upgrade requests in upgrade.ts; on the stream for HTTP/2).
 */
import type { IncomingMessage } from 'node:http';
import type { Http2ServerRequest, Http2ServerResponse } from 'node:http2';
import type { Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import { openForwardConnection, rawConnection, tunnelUnapplicable } from '../backends/dynamic-forward/connection.ts';
import { parseAuthority } from '../backends/dynamic-forward/destination.ts';
import { sendError } from '../http/downstream.ts';
import { renderGatewayError } from '../http/error-format.ts';
import { runLifecycle, type BackendPhase, type BindContext } from './handle-request.ts';
import { socketResponse } from './upgrade.ts';
import { http1TunnelClient, http2TunnelClient, splice, type TunnelClient } from '../http/tunnel.ts';

/** An HTTP/1.1 CONNECT: node hands over the connection's socket and the bytes read past the head. */
export function handleConnect(ctx: BindContext, req: IncomingMessage, socket: Duplex, head: Buffer): void {
  socket.on('error', () => socket.destroy());
  const res = socketResponse(req, socket);
  const authority = req.url ?? '';
  if (!validAuthority(authority)) return badAuthority(res);
  // Routed like a request to that authority: the authority is the host, the path is `/`.
  req.headers.host = authority;
  req.url = '/';
  runLifecycle(ctx, req, res, tunnelBackend(authority, http1TunnelClient(socket as Socket, head, res)));
}

/** An HTTP/2 CONNECT stream: `:authority` names the target, `:scheme` and `:path` are absent. */
export function handleConnectStream(ctx: BindContext, req: Http2ServerRequest, res: Http2ServerResponse): void {
  const authority = req.headers[':authority'] ?? '';
  if (!validAuthority(authority)) return badAuthority(res);
  // Routed by `:authority` (the host of an HTTP/2 request) with `/` as the path.
  req.url = '/';
  runLifecycle(ctx, req, res, tunnelBackend(authority, http2TunnelClient(req, res)));
}

/** RFC 9110 §9.3.6: the target is authority-form, `host:port` with the port required. */
function validAuthority(authority: string): boolean {
  return authority.includes(':') && parseAuthority(authority, 0) !== undefined;
}

function badAuthority(res: TunnelClient['res']): void {
  sendError(res, { code: 'BAD_REQUEST', reason: 'CONNECT needs an authority-form target host:port' });
}

function tunnelBackend(authority: string, client: TunnelClient): BackendPhase {
  return (_ctx, _req, _downstream, fwd, done) => {
    const res = client.res;
    const refuse = (status: number, code: string, message: string) => {
      const body = renderGatewayError(status, { code, message }, 'gateway');
      client.answer(status, body);
      done(status, 0);
    };
    const handler = fwd.backend.handler;
    if (handler) {
      if (!handler.tunnel) return refuse(400, 'bad_request', 'this backend does not accept CONNECT');
      handler.tunnel(authority, client, { labels: fwd.labels, path: fwd.path, headers: fwd.headers, policy: undefined, backendPolicy: fwd.backendPolicy, done });
      return;
    }
    // A member that acts on HTTP or TLS has nothing to act on in an opaque tunnel: fail closed, never connected.
    const unapplicable = tunnelUnapplicable(fwd.backendPolicy);
    if (unapplicable.length > 0) return refuse(500, 'backend_policy_unsupported', `backend policy ${unapplicable.join(', ')} cannot apply to a CONNECT tunnel`);
    if (fwd.backendRuntime && fwd.backendRuntime.invalid.length > 0) return refuse(500, 'policy_invalid', 'a backend policy that applies to this route is invalid');
    if (fwd.target === null) {
      done(sendError(res, { code: 'NO_HEALTHY_ENDPOINT', backend: fwd.backend.key }), 0);
      return;
    }
    // The policy's tcp (connect deadline, keepalive) and tunnel (an upstream CONNECT proxy) shape the connection.
    const endpoint = { address: fwd.target.host, port: fwd.target.port, name: fwd.target.host };
    openForwardConnection(rawConnection(fwd.backendRuntime?.connection), endpoint, (err, upstream) => {
      if (err || !upstream) {
        done(sendError(res, { code: 'UPSTREAM_CONNECT_FAILED', backend: fwd.backend.key, cause: 'tunnel connect failed' }), 0);
        return;
      }
      splice(client, upstream, done);
    });
  };
}
