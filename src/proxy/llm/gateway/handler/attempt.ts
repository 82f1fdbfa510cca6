/**
 * One provider attempt up to its plan: the backend-policy layer (nothing sent when it refuses),
 * the provider's body transformation, request guards, `policies.ai` on the body and the plan from
 * the translation core; then dispatch.ts calls the provider.
 */
import type { CelInput } from '../../../../cel/index.ts';
import type { DownstreamRequest } from '../../../http/downstream.ts';
import { jsonTooDeep, TOO_DEEP_MESSAGE } from '../../../http/json-depth.ts';
import type { CompiledBackendPolicy } from '../../../policies/backend/compile.ts';
import { BodyTooLargeError, type PolicyContext } from '../../../policies/context.ts';
import { planRequest } from '../../translate/plan.ts';
import { gateProviderCall, type PolicyGate } from '../backend-policy.ts';
import { applyRequestPolicy, compileAiPolicy, hasRequestPolicy } from '../body-policy.ts';
import { GUARD_REJECTED, GUARDED_REQUEST_ROUTES, GUARDED_RESPONSE_ROUTES } from '../guards/index.ts';
import { clientBodyFacts, llmInput, type LlmFacts } from '../llm-cel.ts';
import { modelsGroupOf } from '../models-list.ts';
import { account } from './accounting.ts';
import { dispatch } from './dispatch.ts';
import { answerGuards, guardRequest, guardsOf } from './guards.ts';
import { plainHeaders } from './headers.ts';
import { rewriteJson } from './json-body.ts';
import { refuse } from './respond.ts';
import { aiOf, effectivePolicy, OPAQUE_BODY_ROUTES, type Attempt, type Outcome } from './state.ts';

/** Per request, made on first use (only requests whose provider policy transforms bodies pay for it): the body each compiled policy's transformation made. */
const transformedBodies = new WeakMap<PolicyContext, Map<CompiledBackendPolicy, Buffer>>();

export async function attempt(a: Attempt): Promise<Outcome> {
  const { gw } = a;
  const policy = effectivePolicy(a.request.backendPolicy, a.provider);
  const runtime = a.request.backendRuntime?.subBackend(a.provider.name);
  const ctx = a.request.policy;
  // A backend transformation's `request.body` sees the client's body (after the traffic policies) and what it
  // makes of it is planned for this provider (docs/llm.md): each policy starts from the client's body, not from
  // what another provider's transformation made of it on an earlier attempt.
  const transformsBody = runtime?.transformation !== undefined && ctx !== undefined;
  if (transformsBody && !a.ran.has(runtime)) ctx.replaceBody(a.body);
  // The backend-policy layer first: an invalid policy, an extAuth refusal or a transformation answer ends here, nothing sent.
  let gate: PolicyGate;
  try {
    const gating = gateProviderCall(runtime, policy, ctx, a.ran);
    gate = gating instanceof Promise ? await gating : gating;
  } catch (err) {
    if (err instanceof BodyTooLargeError) return { kind: 'answered', status: refuse(a, { status: 413, error: { code: 'payload_too_large', message: err.message } }) };
    gw.logger.error({ backend: gw.ir.key, provider: a.provider.name, err: String(err) }, 'backend policy failed on an LLM provider call');
    return { kind: 'answered', status: refuse(a, { status: 500, error: { code: 'backend_policy_failed', message: 'the backend policy could not be applied' } }) };
  }
  if (gate.kind === 'refused') return { kind: 'answered', status: refuse(a, gate.response) };
  const body = transformsBody ? await transformedBody(runtime, ctx) : a.body;
  if (body !== a.body && !OPAQUE_BODY_ROUTES.has(a.route) && jsonTooDeep(body)) {
    return { kind: 'answered', status: refuse(a, { status: 400, error: { code: 'bad_request', message: TOO_DEEP_MESSAGE } }) };
  }
  const ai = aiOf(policy) ?? gw.ir.policy;
  const compiled = ai ? compileAiPolicy(ai) : undefined;
  const guard = guardsOf(ai);
  let guardedBody: Uint8Array = body;
  // Request guards judge the client's request (after the traffic and backend request steps, before prompt
  // enrichment and defaults, which are the operator's own text) before this provider is called.
  if (guard && guard.request.length > 0 && GUARDED_REQUEST_ROUTES.has(a.route)) {
    const checked = await guardRequest(a, guard, body);
    if (checked.kind === 'reject') {
      gw.logger.info({ backend: gw.ir.key, route: a.route, guard: checked.guard, failed: checked.failed }, 'prompt guard rejected a request');
      return { kind: 'answered', status: refuse(a, { status: checked.status, error: { code: GUARD_REJECTED, message: checked.message } }) };
    }
    guardedBody = checked.body;
  }
  // `llm` as far as each phase sees it (llm-cel.ts): the client's body first, the plan after.
  const cel = (facts: Omit<LlmFacts, 'provider'>): CelInput => ({ ...(a.request.policy?.cel() ?? requestCel(a.req)), llm: llmInput({ provider: a.provider.name, ...facts }) });
  const clientBody = compiled && hasRequestPolicy(compiled) ? rewriteJson(guardedBody, (b) => applyRequestPolicy(b, a.route, compiled, cel(clientBodyFacts(b)))) : guardedBody;
  const plan = planRequest({
    routeType: a.route, provider: a.provider.provider, body: clientBody, path: a.request.path, method: a.req.method,
    modelAliases: ai?.modelAliases, promptCaching: ai?.promptCaching, headers: plainHeaders(a.req.headers),
    // `/v1/models`: the union of the provider's priority group, the same whichever provider the rotation picked.
    modelsGroup: a.route === 'Models' ? modelsGroupOf(gw.ir, a.request.backendPolicy, a.provider) : undefined,
  });
  if (plan.kind === 'respond') {
    a.sink.send(plan.response.status, plan.response.headers, plan.response.body);
    account(a, plan.response.usage, undefined);
    return { kind: 'answered', status: plan.response.status };
  }
  if (guard && guard.response.length > 0 && GUARDED_RESPONSE_ROUTES.has(a.route)) answerGuards.set(plan, guard);
  return dispatch(a, plan, policy, gate.headers, compiled, cel);
}

/** The body after this provider's backend transformation, kept per compiled policy for a failover under the same one. */
async function transformedBody(runtime: CompiledBackendPolicy, ctx: PolicyContext): Promise<Buffer> {
  let made = transformedBodies.get(ctx);
  const known = made?.get(runtime);
  if (known) return known;
  const body = await ctx.readBody();
  if (!made) transformedBodies.set(ctx, (made = new Map()));
  made.set(runtime, body);
  return body;
}

/** The CEL input of a request no traffic policy saw (no policy context was made for it). */
export function requestCel(req: DownstreamRequest): CelInput {
  return {
    request: { method: req.method ?? 'POST', url: req.url ?? '/', headers: req.headers },
    source: { address: req.socket.remoteAddress ?? '', port: req.socket.remotePort ?? 0 },
  };
}
