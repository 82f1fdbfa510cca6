import type { ServerResponse } from 'node:http';
import type { CompiledBind, CompiledListener } from '../compile/config.ts';
import { runTrafficPolicy, type CompiledTrafficPolicy } from '../policies/chain.ts';
import { BodyTooLargeError } from '../policies/context.ts';
import { RequestPolicyContext } from '../policies/request-context.ts';
import type { PolicyResult } from '../policies/result.ts';
import { pathOnly } from '../telemetry/access-log.ts';
import type { RequestLabels } from '../telemetry/metrics.ts';
import { attributeLabels } from '../telemetry/metric-attributes.ts';
import { sendDirect, sendError, sendGatewayError, sendRedirect, serverName, type DownstreamRequest, type DownstreamResponse } from '../http/downstream.ts';
import { Exchange, type Forward, type Telemetry, type UpstreamForward } from './exchange.ts';
import { requestHost, resolveRequest, selectListener, splitTarget, type IncomingView, type Resolution } from './resolve.ts';
import type { HeaderMap } from '../http/headers.ts';
import { forwardWithBackendPolicy } from '../policies/backend/forward.ts';
import { accessLogReadsFacts, writeAccessLog } from '../policies/frontend/access-log.ts';
import { runTraced, startRequestTrace, type RequestTrace } from '../telemetry/tracing/request-trace.ts';
import { RequestFacts, requestFacts, runInScope } from '../telemetry/request-facts.ts';
import { answerDiscovery } from '../mcp/oauth/well-known.ts';
import { resolveMcpDiscovery, type McpDiscovery } from './mcp-discovery.ts';
import { admitRequest } from './admit.ts';
import { dispatchToHandler } from './handler-dispatch.ts';
import { clientFormat } from '../backends/client-format.ts';
import { agentCardRequest } from '../a2a/card-request.ts';
import type { ClientFormat } from '../http/error-format.ts';

/** The per-bind state a request reads once, at its start. */
export interface BindContext {
  /** Swapped atomically by the runtime; a request keeps the one it started with. */
  compiled: CompiledBind;
  /** Set while the bind drains: HTTP/1 responses close their connection. */
  draining: boolean;
  readonly scheme: 'http' | 'https';
  readonly telemetry: Telemetry;
}

export function viewOf(req: DownstreamRequest, scheme: 'http' | 'https'): IncomingView {
  return {
    method: req.method ?? 'GET',
    url: req.url ?? '/',
    headers: req.headers,
    remoteAddress: req.socket.remoteAddress,
    sni: scheme === 'https' ? serverName(req) : undefined,
    scheme,
  };
}

/**
 * The backend phase of the lifecycle: what happens once the route's filters and traffic policies
 * let the request go on. Ordinary requests go to an in-process handler or upstream through an
 * Exchange (`dispatch`); Upgrade requests open a relayed connection (upgrade.ts). It ends in one
 * call of `done` with the status the client saw.
 */
export type BackendPhase = (
  ctx: BindContext,
  req: DownstreamRequest,
  res: DownstreamResponse,
  fwd: Forward,
  done: (status: number, bytes: number) => void,
  policy: RequestPolicyContext | undefined,
) => void;

/** The request handler of every bind, HTTP/1.1 and HTTP/2 alike. */
export function handleRequest(ctx: BindContext, req: DownstreamRequest, res: DownstreamResponse): void {
  runLifecycle(ctx, req, res, dispatch);
}

/**
 * One request's lifecycle (docs/architecture.md): admit → PreRouting → route → route filters and
 * PostRouting policies → `backend` → access log and metrics. Every request walks it, Upgrade
 * requests included (their `res` writes on the raw socket), so no phase is skipped for any kind.
 */
export function runLifecycle(ctx: BindContext, req: DownstreamRequest, res: DownstreamResponse, backend: BackendPhase): void {
  // frontend `tracing` (telemetry/tracing): only a sampled request makes spans and enters a trace context.
  const tracing = ctx.compiled.tracing;
  const requestTrace = tracing === undefined ? undefined : startRequestTrace(tracing, req, ctx.scheme);
  if (requestTrace !== undefined) runTraced(requestTrace, () => lifecycle(ctx, req, res, backend, requestTrace, requestTrace.facts));
  else if (accessLogReadsFacts(ctx.compiled.frontend?.accessLog, ctx.compiled.accessLogExport)) {
    // An access log with CEL reads what the request earned (jwt, apiKey, llm.*, mcp.* …) at its end.
    const facts = new RequestFacts();
    runInScope({ trace: undefined, facts }, () => lifecycle(ctx, req, res, backend, undefined, facts));
  } else lifecycle(ctx, req, res, backend, undefined, undefined);
}

function lifecycle(ctx: BindContext, req: DownstreamRequest, res: DownstreamResponse, backend: BackendPhase, requestTrace: RequestTrace | undefined, facts: RequestFacts | undefined): void {
  const started = performance.now();
  const bind = ctx.compiled;
  // accessLog.otlp: the request holds its config's logger provider until its record is emitted.
  let holdsLogExport = bind.accessLogExport?.lifecycle;
  holdsLogExport?.enter();
  if (ctx.draining && 'shouldKeepAlive' in res) (res as ServerResponse).shouldKeepAlive = false;
  let labels: RequestLabels = { gateway: '', listener: '', route: '', backend: '' };
  const done = (status: number, bytes: number) => {
    const seconds = (performance.now() - started) / 1000;
    // frontend metrics.attributes: evaluated only on binds that configure them.
    const attributes = bind.frontend?.metricAttributes;
    ctx.telemetry.metrics.requestDone(labels, status, seconds, attributes === undefined ? undefined : attributeLabels(attributes, { req, scheme: ctx.scheme, status, names: labels }));
    requestTrace?.end(status, labels);
    writeAccessLog(ctx.telemetry.logger, bind.frontend?.accessLog, {
      method: req.method ?? '',
      path: pathOnly(req.url),
      status,
      durationMs: Math.round(seconds * 1e4) / 10,
      route: labels.route,
      backend: labels.backend,
      bytes,
    }, req, ctx.scheme, labels, facts, bind.accessLogExport);
    if (holdsLogExport) {
      holdsLogExport.leave();
      holdsLogExport = undefined;
    }
  };
  try {
    // Host rules and the canonical path, before anything reads the request (admit.ts).
    const refused = admitRequest(req);
    if (refused) {
      done(sendError(res, refused), 0);
      return;
    }
    const view = viewOf(req, ctx.scheme);
    if (bind.hasPreRouting) {
      const host = requestHost(req.headers);
      const selected = selectListener(bind, view, host);
      const preRouting = 'listener' in selected ? selected.listener.preRouting : undefined;
      if (preRouting) {
        const listener = (selected as { listener: CompiledListener }).listener;
        labels = { gateway: listener.gateway, listener: listener.sectionName, route: '', backend: '' };
        preRoute(ctx, bind, req, res, view, host, preRouting, done, (l) => { labels = l; }, backend);
        return;
      }
    }
    const resolution = route(bind, view);
    labels = resolution.kind === 'mcp-discovery' ? resolution.request.labels : resolution.labels;
    continueResolved(ctx, req, res, resolution, done, undefined, backend);
  } catch (err) {
    // A bug must cost one request, never the process.
    ctx.telemetry.logger.error({ err }, 'request handler failed');
    done(sendError(res, { code: 'INTERNAL', cause: String(err) }), 0);
  }
}

/** The route phase: an MCP OAuth discovery request is routed to the MCP route of its resource (mcp-discovery.ts), any other by its own path. */
function route(bind: CompiledBind, view: IncomingView): Resolution | McpDiscovery {
  return resolveMcpDiscovery(bind, view) ?? resolveRequest(bind, view);
}

/** After routing: answer the error or redirect, or run the route's policy and forward. */
function continueResolved(ctx: BindContext, req: DownstreamRequest, res: DownstreamResponse, resolution: Resolution | McpDiscovery, done: (status: number, bytes: number) => void, preRouted: RequestPolicyContext | undefined, backend: BackendPhase): void {
  switch (resolution.kind) {
    case 'mcp-discovery':
      discover(ctx, req, res, resolution, done, preRouted);
      return;
    case 'error':
      done(sendError(res, resolution.error), 0);
      return;
    case 'redirect':
      sendRedirect(res, resolution.status, resolution.location);
      done(resolution.status, 0);
      return;
    case 'forward':
      preRouted?.routed(resolution);
      if (resolution.traffic === undefined) backend(ctx, req, res, resolution, done, preRouted);
      else applyPolicies(ctx, req, res, resolution, done, preRouted, backend);
      return;
  }
}

/**
 * The listener's PreRouting policy runs before a route is chosen, on a context that then continues
 * into PostRouting: header changes it makes are what route matching sees, and the identity it
 * establishes, a body it buffered and its response mutations carry on.
 */
function preRoute(
  ctx: BindContext,
  bind: CompiledBind,
  req: DownstreamRequest,
  res: DownstreamResponse,
  view: IncomingView,
  host: string,
  preRouting: CompiledTrafficPolicy,
  requestDone: (status: number, bytes: number) => void,
  setLabels: (labels: RequestLabels) => void,
  backend: BackendPhase,
): void {
  const target = splitTarget(view.url);
  const labels: RequestLabels = { gateway: '', listener: '', route: '', backend: '' };
  const headers = { ...req.headers } as HeaderMap;
  const policy = new RequestPolicyContext(req, { clientPath: target?.path ?? view.url, query: target?.query ?? '', host, headers, labels }, ctx.scheme, bind.frontend?.http.maxBufferBytes);
  // End-of-request CEL (span attributes, access log) sees what the policies established (jwt, apiKey …).
  requestFacts()?.useCel(() => policy.cel());
  const done = (status: number, bytes: number) => {
    policy.end();
    requestDone(status, bytes);
  };
  const proceed = (result: PolicyResult) => {
    if (result.action !== 'continue') {
      done(sendDirect(res, result.response, policy.responseMutations), 0);
      return;
    }
    const resolution = route(bind, { ...view, headers: policy.upstreamHeaders as IncomingView['headers'] });
    setLabels(resolution.kind === 'mcp-discovery' ? resolution.request.labels : resolution.labels);
    continueResolved(ctx, req, res, resolution, done, policy, backend);
  };
  // No route yet, so no backend whose clients' format is known: PreRouting answers use the gateway's.
  runPolicy(ctx, res, preRouting, policy, proceed, done, gatewayFormat);
}

/** Runs a compiled traffic policy; failures answer 413 (body over the buffer limit) or 500, in the client's format. */
function runPolicy(ctx: BindContext, res: DownstreamResponse, compiled: CompiledTrafficPolicy, policy: RequestPolicyContext, proceed: (result: PolicyResult) => void, done: (status: number, bytes: number) => void, format: () => ClientFormat): void {
  const fail = (err: unknown) => {
    if (err instanceof BodyTooLargeError) {
      done(sendGatewayError(res, { code: 'PAYLOAD_TOO_LARGE', limit: err.limit }, policy.responseMutations, format()), 0);
      return;
    }
    ctx.telemetry.logger.error({ err }, 'traffic policy failed');
    done(sendGatewayError(res, { code: 'INTERNAL', cause: String(err) }, policy.responseMutations, format()), 0);
  };
  try {
    const result = runTrafficPolicy(compiled, policy);
    if (result instanceof Promise) result.then(proceed, fail);
    else proceed(result);
  } catch (err) {
    fail(err);
  }
}

/** Runs the route's traffic policy, then either answers from the gateway or forwards. */
function applyPolicies(ctx: BindContext, req: DownstreamRequest, res: DownstreamResponse, fwd: Forward, requestDone: (status: number, bytes: number) => void, preRouted: RequestPolicyContext | undefined, backend: BackendPhase): void {
  const policy = preRouted ?? new RequestPolicyContext(req, fwd, ctx.scheme, ctx.compiled.frontend?.http.maxBufferBytes);
  if (!preRouted) requestFacts()?.useCel(() => policy.cel());
  // Every path below ends in `done`: the policies' end-of-request listeners (ext_proc sessions) run there.
  const done = (status: number, bytes: number) => {
    policy.end();
    requestDone(status, bytes);
  };
  // Only gateway refusals read it, and an AI backend serving several route types chooses by path: decided when needed.
  const format = () => clientFormat(fwd.clientFormat, fwd.path, req.headers);
  const proceed = (result: PolicyResult) => {
    if (result.action === 'continue') {
      backend(ctx, req, res, fwd, done, policy);
      return;
    }
    done(sendDirect(res, result.response, policy.responseMutations, result.response.error ? format() : 'gateway'), 0);
  };
  runPolicy(ctx, res, fwd.traffic!, policy, proceed, done, format);
}

/**
 * An MCP OAuth discovery request on its MCP route: the route's traffic policy up to its
 * jwtAuthentication step, then that step's document. Answers carry the response effects the
 * policies registered (PreRouting's, the route's CORS), like any policy answer on the route.
 */
function discover(ctx: BindContext, req: DownstreamRequest, res: DownstreamResponse, discovery: McpDiscovery, requestDone: (status: number, bytes: number) => void, preRouted: RequestPolicyContext | undefined): void {
  preRouted?.routed(discovery.request);
  const policy = preRouted ?? new RequestPolicyContext(req, discovery.request, ctx.scheme, ctx.compiled.frontend?.http.maxBufferBytes);
  const done = (status: number, bytes: number) => {
    policy.end();
    requestDone(status, bytes);
  };
  const proceed = (result: PolicyResult) => {
    if (result.action !== 'continue') {
      done(sendDirect(res, result.response, policy.responseMutations), 0);
      return;
    }
    const { resource, document, address, request } = discovery;
    answerDiscovery(resource, document, address, req, request.query).then(
      (answer) => done(sendDirect(res, answer, policy.responseMutations), 0),
      (err: unknown) => {
        ctx.telemetry.logger.error({ err }, 'MCP OAuth discovery answer failed');
        done(sendGatewayError(res, { code: 'INTERNAL', cause: String(err) }, policy.responseMutations, 'gateway'), 0);
      },
    );
  };
  runPolicy(ctx, res, discovery.before, policy, proceed, done, gatewayFormat);
}

function gatewayFormat(): ClientFormat {
  return 'gateway';
}

/** The backend phase of ordinary requests: to the backend's in-process handler, or upstream through an Exchange. */
function dispatch(
  ctx: BindContext,
  req: DownstreamRequest,
  res: DownstreamResponse,
  fwd: Forward,
  done: (status: number, bytes: number) => void,
  policy: RequestPolicyContext | undefined,
): void {
  if (fwd.backend.handler) {
    // The backend policy's request steps (extAuth, transformation) need a policy context even when no traffic policy made one.
    if (!policy && fwd.backendRuntime?.needsContext) {
      const context = new RequestPolicyContext(req, fwd, ctx.scheme, ctx.compiled.frontend?.http.maxBufferBytes);
      dispatchToHandler(req, res, fwd, (status, bytes) => {
        context.end();
        done(status, bytes);
      }, context);
      return;
    }
    dispatchToHandler(req, res, fwd, done, policy);
    return;
  }
  if (fwd.backend.a2aCardPaths) {
    // An A2A agent card on its way back is rewritten to name the gateway (src/proxy/a2a); other requests pass as they are.
    const card = agentCardRequest(fwd.backend.a2aCardPaths, { method: req.method ?? 'GET', clientPath: fwd.clientPath, path: fwd.path, headers: fwd.headers }, req.headers, ctx.scheme);
    if (card) {
      if (!policy) {
        const context = new RequestPolicyContext(req, fwd, ctx.scheme, ctx.compiled.frontend?.http.maxBufferBytes);
        const ended = done;
        done = (status, bytes) => {
          context.end();
          ended(status, bytes);
        };
        policy = context;
      }
      policy.responseFilters.push(card);
    }
  }
  if (fwd.target === null) {
    done(sendError(res, { code: 'NO_HEALTHY_ENDPOINT', backend: fwd.backend.key }), 0);
    return;
  }
  if (fwd.backendRuntime) {
    forwardWithBackendPolicy(fwd.backendRuntime, fwd as UpstreamForward, policy, done, {
      start: (prepared, onDone, context) => new Exchange(req, res, prepared, ctx.telemetry, onDone, context).start(),
      respond: (response, context) => sendDirect(res, response, context?.responseMutations ?? []),
      createContext: () => new RequestPolicyContext(req, fwd, ctx.scheme, ctx.compiled.frontend?.http.maxBufferBytes),
    });
    return;
  }
  new Exchange(req, res, fwd as UpstreamForward, ctx.telemetry, done, policy).start();
}
