/**
 * One request across providers: the body read and checked once, the model's provider group
 * (ProxyModels), then attempt after attempt — the next provider (and priority group) or a
 * traffic.retry when an attempt fails before anything reached the client (failover.ts) — each
 * traced and metered; the last held-back failure answers when every attempt failed.
 */
import type { HandlerRequest } from '../../../backends/handlers.ts';
import type { DownstreamRequest, DownstreamResponse } from '../../../http/downstream.ts';
import { jsonTooDeep, TOO_DEEP_MESSAGE } from '../../../http/json-depth.ts';
import type { CompiledBackendPolicy } from '../../../policies/backend/compile.ts';
import { BodyTooLargeError } from '../../../policies/context.ts';
import { LlmCallMeter } from '../../../telemetry/ai-metrics.ts';
import { llmAttemptSpan } from '../../../telemetry/tracing/genai.ts';
import { renderError } from '../../translate/errors.ts';
import { routeTypeFor } from '../../translate/route-type.ts';
import type { PolicyGate } from '../backend-policy.ts';
import { AiPolicyError } from '../body-policy.ts';
import { ResponseTooLargeError } from '../bounded-body.ts';
import { ClientSink, readRequestBody } from '../client-io.ts';
import { CredentialError } from '../credentials/index.ts';
import { backoff, isFailoverStatus, ProviderSchedule, type AttemptFailure } from '../failover.ts';
import type { ModelRouter } from '../model-router.ts';
import type { ProviderPicker } from '../picker.ts';
import { ClientGoneError } from '../upstream.ts';
import { attempt, requestCel } from './attempt.ts';
import { isConnectFailure, isTimeout } from './attempt-errors.ts';
import { aiOf, errorFormatOf, OPAQUE_BODY_ROUTES, type GatewayState, type Retryable } from './state.ts';

/** Serves one request; resolves with the status the client saw and the body bytes written. */
export async function serveRequest(
  gw: GatewayState, basePicker: ProviderPicker, router: ModelRouter | undefined,
  req: DownstreamRequest, res: DownstreamResponse, request: HandlerRequest,
): Promise<{ status: number; bytes: number }> {
  const sink = new ClientSink(res);
  const backendAi = aiOf(request.backendPolicy) ?? gw.ir.policy;
  const route = routeTypeFor(request.path, backendAi?.routes);
  const format = errorFormatOf(route, req.headers['anthropic-version']);
  if (router && route === 'Models') {
    // ProxyModels: the gateway's own list of models (model-router.ts), no vendor asked.
    sink.send(200, { 'content-type': 'application/json' }, router.catalog(req.headers['anthropic-version'] !== undefined));
    return { status: 200, bytes: sink.bytes };
  }
  const fail = (status: number, message: string, code?: string) => {
    const r = renderError({ status, message, ...(code ? { code } : {}) }, format);
    sink.refuse(r.status, r.headers, r.body);
    return { status: r.status, bytes: sink.bytes };
  };
  let body: Buffer;
  try {
    body = await readRequestBody(req, request.policy);
  } catch (err) {
    if (err instanceof BodyTooLargeError) return fail(413, err.message);
    throw err;
  }
  // JSON.stringify and the translators recurse: a deep body is a client error, not a stack overflow.
  if (!OPAQUE_BODY_ROUTES.has(route) && jsonTooDeep(body)) return fail(400, TOO_DEEP_MESSAGE);

  let picker = basePicker;
  if (router) {
    // The request's CEL input is built only for a model that evaluates something (a conditional choice, its own authorization).
    const choice = router.choose(body, () => request.policy?.cel() ?? requestCel(req));
    if (choice.kind === 'no-model') return fail(400, 'the request body must name a model');
    if (choice.kind === 'unknown') return fail(404, `the model ${JSON.stringify(choice.model.slice(0, 256))} does not exist`, 'model_not_found');
    if (choice.kind === 'denied') return fail(403, `the request is not authorized for the model ${JSON.stringify(choice.model.slice(0, 256))}`, 'forbidden');
    if (choice.kind === 'no-target') return fail(404, `no condition of the model ${JSON.stringify(choice.model.slice(0, 256))} holds for this request, and it has no fallback`, 'model_not_found');
    picker = choice.picker;
  }
  // Failover between providers and the route's traffic.retry, combined (failover.ts).
  const schedule = new ProviderSchedule(picker, request.policy?.upstream.retry);
  const ran = new Map<CompiledBackendPolicy, PolicyGate>();
  let last: Retryable | undefined;
  /** Further replicas of the current provider to try after a refused connection. */
  let replicasLeft = -1;
  for (let provider = schedule.first(); provider !== undefined;) {
    if (sink.closed) break;
    if (replicasLeft < 0) replicasLeft = (provider.endpoints?.length ?? 1) - 1;
    let failure: AttemptFailure;
    // Traced requests only: a GenAI CLIENT span per provider attempt (telemetry/tracing/genai.ts).
    const span = llmAttemptSpan(provider, route);
    // Every attempt: GenAI metrics (telemetry/ai-metrics.ts).
    const meter = new LlmCallMeter(gw.ir.key, provider, route);
    try {
      const outcome = await attempt({ gw, req, request, sink, route, body, provider, format, ran, schedule, span, meter });
      span?.end({ status: outcome.status });
      meter.end({ status: outcome.status });
      if (outcome.kind === 'answered') return { status: outcome.status, bytes: sink.bytes };
      last = outcome;
      failure = { status: outcome.status, failover: isFailoverStatus(outcome.status) };
    } catch (err) {
      span?.end({ error: err });
      meter.end({ error: err });
      if (err instanceof ClientGoneError) break;
      if (err instanceof AiPolicyError) return fail(err.status, err.status === 500 ? 'the backend AI policy is invalid' : err.message);
      if (err instanceof CredentialError) {
        gw.logger.error({ backend: gw.ir.key, provider: provider.name, err: err.message }, 'LLM provider credentials unavailable');
        last = { kind: 'retryable', status: 502, answer: async () => fail(502, 'the gateway could not authenticate to the provider').status };
      } else if (err instanceof ResponseTooLargeError) {
        gw.logger.warn({ backend: gw.ir.key, provider: provider.name, limit: err.limit }, 'LLM provider answer over the buffer limit; aborted');
        const message = err.message;
        last = { kind: 'retryable', status: 502, answer: async () => fail(502, message).status };
      } else if (sink.started) {
        throw err;
      } else if (replicasLeft > 0 && isConnectFailure(err)) {
        // Nothing was sent: another replica of the same Service gets the request (ReplicaTurns moves on).
        gw.logger.warn({ backend: gw.ir.key, provider: provider.name, err: String(err) }, 'LLM provider replica unreachable; trying the next replica');
        replicasLeft--;
        continue;
      } else {
        const timeout = isTimeout(err);
        gw.logger.warn({ backend: gw.ir.key, provider: provider.name, err: String(err) }, 'LLM provider unreachable');
        // docs/errors.md codes, as a Service backend's upstream failures carry them.
        last = timeout
          ? { kind: 'retryable', status: 504, answer: async () => fail(504, 'the provider did not answer in time', 'upstream_timeout').status }
          : { kind: 'retryable', status: 502, answer: async () => fail(502, 'could not reach the provider', isConnectFailure(err) ? 'upstream_connect_failed' : 'upstream_reset').status };
      }
      failure = { failover: true, connectFailure: isConnectFailure(err) };
    }
    replicasLeft = -1;
    const next = schedule.next(failure);
    if (!next) break;
    gw.logger.warn({ backend: gw.ir.key, provider: provider.name, status: last.status, next: next.provider.name, retry: next.retry }, next.retry ? 'LLM provider attempt failed; retrying (traffic.retry)' : 'LLM provider failed; trying the next one');
    await backoff(next.delayMs, sink);
    provider = next.provider;
  }
  if (sink.closed) return { status: 499, bytes: sink.bytes };
  if (!last) return fail(503, 'no provider is available');
  const sent = await last.answer();
  return { status: sent, bytes: sink.bytes };
}
