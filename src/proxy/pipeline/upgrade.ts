/**
 * HTTP/1.1 Upgrade requests (WebSocket, LLM Realtime …) walk the same lifecycle as every request
 * (handle-request.ts `runLifecycle`): admit, the listener's PreRouting policies, route matching,
 * route filters and PostRouting policies. Until the upgrade happens, the gateway answers on the raw
 * socket through a node ServerResponse, so refusals (401 with its challenge, 429 with Retry-After,
 * 500 for an invalid backend policy …) are the same HTTP answers, in the same format, as on the
 * ordinary path. Only the backend phase differs: an in-process handler takes the socket
 * (`upgrade()`), anything else is relayed to an endpoint through the backend policy (upgrade-relay.ts).
 */
import { ServerResponse, type IncomingMessage } from 'node:http';
import type { Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import { forwardWithBackendPolicy } from '../policies/backend/forward.ts';
import { clientFormat } from '../backends/client-format.ts';
import { RequestPolicyContext } from '../policies/request-context.ts';
import { sendDirect, sendError, sendGatewayError } from '../http/downstream.ts';
import type { UpstreamForward } from './exchange.ts';
import { runLifecycle, type BackendPhase, type BindContext } from './handle-request.ts';
import { applyEffectsToFirstHead, hasHeadEffects } from './response-head.ts';
import { relayUpgrade } from './upgrade-relay.ts';

export function handleUpgrade(ctx: BindContext, req: IncomingMessage, client: Duplex, head: Buffer): void {
  client.on('error', () => client.destroy());
  runLifecycle(ctx, req, socketResponse(req, client), upgradeBackend(req, client, head));
}

/**
 * A ServerResponse writing on the upgrade's socket: node renders the status line and headers as
 * for any request, with `connection: close`; the socket ends with the answer.
 */
export function socketResponse(req: IncomingMessage, client: Duplex): ServerResponse {
  const res = new ServerResponse(req);
  res.shouldKeepAlive = false;
  res.assignSocket(client as Socket);
  res.once('finish', () => {
    res.detachSocket(client as Socket);
    client.end();
  });
  return res;
}

/** The backend phase of an upgrade: the handler's own `upgrade()`, or a relay to an endpoint. */
function upgradeBackend(req: IncomingMessage, client: Duplex, head: Buffer): BackendPhase {
  return (ctx, _req, downstream, fwd, done, policy) => {
    const res = downstream as ServerResponse;
    const handler = fwd.backend.handler;
    if (handler) {
      if (!handler.upgrade) {
        done(sendGatewayError(res, { code: 'BAD_REQUEST', reason: 'this backend does not accept upgrade requests' }, policy?.responseMutations ?? [], clientFormat(fwd.clientFormat, fwd.path, req.headers)), 0);
        return;
      }
      // The handler writes its answer (101 or a refusal) on the socket itself; the response effects still apply to it.
      res.detachSocket(client as Socket);
      const effects = { filters: fwd.filters, mutations: policy?.responseMutations };
      if (hasHeadEffects(effects)) applyEffectsToFirstHead(client, effects);
      // As on ordinary requests (handle-request.ts dispatch): the backend policy's request steps (extAuth,
      // transformation) need a policy context even when no traffic policy made one; without it they fail closed.
      let context = policy;
      let finish = done;
      if (!context && fwd.backendRuntime?.needsContext) {
        const made = new RequestPolicyContext(req, fwd, ctx.scheme, ctx.compiled.frontend?.http.maxBufferBytes);
        context = made;
        finish = (status, bytes) => {
          made.end();
          done(status, bytes);
        };
      }
      // The handler looks for policy-set headers only when something may have set some (handler-dispatch.ts).
      const headersMayHaveChanged = context !== undefined || fwd.filters.requestHeaders.length > 0;
      handler.upgrade(req, client, head, { labels: fwd.labels, path: fwd.path, headers: fwd.headers, headersMayHaveChanged, policy: context, backendPolicy: fwd.backendPolicy, backendRuntime: fwd.backendRuntime, done: finish });
      return;
    }
    if (fwd.target === null) {
      done(sendError(res, { code: 'NO_HEALTHY_ENDPOINT', backend: fwd.backend.key }), 0);
      return;
    }
    const runtime = fwd.backendRuntime;
    const relay = (upstream: UpstreamForward, onDone: (status: number, bytes: number) => void, context: RequestPolicyContext | undefined) => relayUpgrade({
      req, client, head, res, fwd: upstream, policy: context, connection: runtime?.connection, telemetry: ctx.telemetry, done: onDone,
    });
    if (!runtime) {
      relay(fwd as UpstreamForward, done, policy);
      return;
    }
    // The same backend-policy layer as any upstream call: fail closed when invalid, transformation, credentials, passive health.
    forwardWithBackendPolicy(runtime, fwd as UpstreamForward, policy, done, {
      start: relay,
      respond: (response, context) => sendDirect(res, response, context?.responseMutations ?? []),
      createContext: () => new RequestPolicyContext(req, fwd, ctx.scheme, ctx.compiled.frontend?.http.maxBufferBytes),
    });
  };
}
