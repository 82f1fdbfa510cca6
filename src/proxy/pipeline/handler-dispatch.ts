/**
 * The backend phase for in-process backend kinds (ai, mcp): the handler plans and makes the
 * upstream call(s), the pipeline keeps what is its own on every kind — response effects on the
 * head the handler writes, response filters on its answer (handlers that take them), and the
 * route's deadlines (HTTPRoute `timeouts.request` /
 * `timeouts.backendRequest`, traffic `timeouts.request`, less time spent in `delay`). A deadline
 * covers the time until the handler sends the response head: a buffered answer as a whole, a
 * streamed one to its first byte (docs/policies-traffic.md). When it passes first, the client gets
 * 504 in its format and the handler is cut off (its upstream request aborted).
 */
import type { ProxyError } from '../http/errors.ts';
import type { RequestPolicyContext } from '../policies/request-context.ts';
import { clientFormat } from '../backends/client-format.ts';
import { sendGatewayError, type DownstreamRequest, type DownstreamResponse } from '../http/downstream.ts';
import type { Forward } from './exchange.ts';
import { HandlerResponse } from './handler-response.ts';

export function dispatchToHandler(
  req: DownstreamRequest,
  res: DownstreamResponse,
  fwd: Forward,
  done: (status: number, bytes: number) => void,
  policy: RequestPolicyContext | undefined,
): void {
  const handler = fwd.backend.handler!;
  const mutations = policy?.responseMutations;
  const requestMs = fwd.traffic?.requestTimeoutMs ?? fwd.rule.requestTimeoutMs;
  const backendMs = fwd.rule.backendTimeoutMs;
  // Handlers send policy-set headers upstream; they look for them only when something may have set some.
  const headersMayHaveChanged = policy !== undefined || fwd.filters.requestHeaders.length > 0;
  // The backend policy's request steps run inside the handler and may add response effects then
  // (extAuth's response headers, a transformation's response side): the wrapper must be there for them.
  const stepsAddEffects = fwd.backendRuntime?.addsResponseEffects === true;
  // Response filters (transformation response.body, ext_proc response phases) run on the answers of handlers that take them.
  const filters = handler.filtersResponses === true ? policy?.responseFilters : undefined;
  // Nothing of the pipeline's to apply: the handler writes the client's response directly (no wrapper, no timer).
  if (requestMs === undefined && backendMs === undefined && fwd.filters.responseHeaders.length === 0 && (mutations === undefined || mutations.length === 0) && !stepsAddEffects && (filters === undefined || filters.length === 0)) {
    handler.handle(req, res, { labels: fwd.labels, path: fwd.path, headers: fwd.headers, headersMayHaveChanged, policy, backendPolicy: fwd.backendPolicy, backendRuntime: fwd.backendRuntime, done });
    return;
  }
  const timers: NodeJS.Timeout[] = [];
  const clearTimers = () => {
    for (const t of timers) clearTimeout(t);
    timers.length = 0;
  };
  let finished = false;
  const finish = (status: number, bytes: number) => {
    if (finished) return;
    finished = true;
    clearTimers();
    done(status, bytes);
  };
  const filtering = filters === undefined ? undefined : { filters, method: req.method ?? 'GET', complete: finish, format: clientFormat(fwd.clientFormat, fwd.path, req.headers) };
  const wrapped = new HandlerResponse(res, fwd.filters.responseHeaders, mutations ?? [], clearTimers, filtering);
  const expire = (error: ProxyError) => {
    if (finished || res.headersSent) return;
    // Cut first: the handler sees its client gone and aborts the upstream request; then answer.
    wrapped.cutOff();
    finish(sendGatewayError(res, error, mutations ?? [], clientFormat(fwd.clientFormat, fwd.path, req.headers)), 0);
  };
  const arm = (ms: number, error: ProxyError) => {
    if (ms <= 0) return expire(error);
    timers.push(setTimeout(() => expire(error), ms));
  };
  // Fault-injected delays already spent part of the request timeout (SPEC.md traffic.delay).
  if (requestMs !== undefined) arm(requestMs - (policy?.upstream.delayedMs ?? 0), { code: 'REQUEST_TIMEOUT' });
  if (backendMs !== undefined && !finished) arm(backendMs, { code: 'BACKEND_TIMEOUT', backend: fwd.backend.key });
  if (finished) return;
  // With filters the status the client got comes from them once they are through (HandlerResponse.handlerDone).
  const handlerDone = filtering === undefined ? finish : (status: number, bytes: number) => wrapped.handlerDone(status, bytes);
  handler.handle(req, wrapped, { labels: fwd.labels, path: fwd.path, headers: fwd.headers, headersMayHaveChanged, policy, backendPolicy: fwd.backendPolicy, backendRuntime: fwd.backendRuntime, done: handlerDone });
}
