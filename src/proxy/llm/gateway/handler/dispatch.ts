/**
 * Calling the provider with a plan: the upstream headers (passthrough or translated, policy header
 * changes, credentials last), signing, the pool and timeouts, provider health around the call;
 * buffered answers here, streams and passthrough in stream.ts.
 */
import type { CelInput } from '../../../../cel/index.ts';
import type { BackendPolicy } from '../../../../ir/policy.ts';
import { policyHeaderChanges, type HeaderChanges } from '../../../policies/backend/policy-headers.ts';
import type { RequestIdentity } from '../../../policies/context.ts';
import type { ForwardPlan } from '../../translate/plan.ts';
import { applyHeaderChanges, dropClientCredentials, providerHasOwnCredential } from '../backend-policy.ts';
import { applyFinalTransformations, type CompiledAiPolicy } from '../body-policy.ts';
import { sentSecrets } from '../credential-mask.ts';
import type { LlmFacts } from '../llm-cel.ts';
import { bufferedRequest, clientHostFor, hostHeader, pinnedServerName } from '../upstream.ts';
import { attemptFailed } from './attempt-errors.ts';
import { rewriteJson } from './json-body.ts';
import { FORWARDED_TO_MESSAGES, HOP_BY_HOP, passthroughHeaders } from './headers.ts';
import { sendBuffered } from './respond.ts';
import type { Attempt, Outcome, Tracked } from './state.ts';
import { streamAttempt } from './stream.ts';

const DEFAULT_TIMEOUT_MS = 300_000;

export async function dispatch(
  a: Attempt, plan: ForwardPlan, policy: BackendPolicy | undefined, stepHeaders: HeaderChanges,
  compiled: CompiledAiPolicy | undefined, cel: (facts: Omit<LlmFacts, 'provider'>) => CelInput,
): Promise<Outcome> {
  const { gw } = a;
  const up = plan.upstream;
  const upstreamBody = compiled && compiled.finalTransformations.length > 0 && plan.upstreamFormat !== 'passthrough'
    ? rewriteJson(up.body, (b) => applyFinalTransformations(b, compiled, cel({ requestModel: plan.model, streaming: plan.stream })))
    : up.body;
  // traffic.hostRewrite None sends the client's Host; the provider's own otherwise.
  const clientHost = clientHostFor(a.request);
  const host = clientHost ?? hostHeader(up);
  const baseHeaders: Record<string, string> = plan.upstreamFormat === 'passthrough' ? passthroughHeaders(a.request.headers) : { ...up.headers };
  // The client's credentials stay home when the provider gets its own (translated routes never copy them).
  if (plan.upstreamFormat === 'passthrough' && providerHasOwnCredential(policy?.auth, up.credential)) dropClientCredentials(baseHeaders, a.request.policy?.identity);
  if (plan.upstreamFormat === 'messages') for (const name of FORWARDED_TO_MESSAGES) if (typeof a.req.headers[name] === 'string') baseHeaders[name] = a.req.headers[name];
  // Headers filters and policies added, changed or removed reach the provider on every route type
  // (docs/llm.md); the credentials written next still win over them.
  // Framing is the gateway's: a backend body transformation's new content-length is the client-format body's, not the provider's.
  applyHeaderChanges(baseHeaders, stepHeaders, HOP_BY_HOP);
  applyHeaderChanges(baseHeaders, policyHeaderChanges(a.req.headers, a.request.headers, a.request.headersMayHaveChanged === true || stepHeaders.size > 0));
  const identity: RequestIdentity = a.request.policy?.identity ?? {};
  const signing = gw.credentials.apply({ host, method: up.method, path: up.path, headers: baseHeaders, body: upstreamBody, credential: up.credential }, policy?.auth, identity, () => cel({ requestModel: plan.model, streaming: plan.stream }));
  // Keys and fixed-key signing are synchronous: no promise hop for them.
  const signed = signing instanceof Promise ? await signing : signing;
  // What the provider answers in an error may echo these; the client must not see them.
  const secrets = sentSecrets({ headers: baseHeaders, path: up.path }, signed);
  const timeoutMs = policy?.http?.requestTimeoutMs ?? DEFAULT_TIMEOUT_MS;
  const dispatcher = gw.pools.acquire(gw.replicas.target(a.provider, up), policy);
  const options = {
    method: up.method as 'POST', path: signed.path, headers: { ...signed.headers, host }, body: upstreamBody.length > 0 ? upstreamBody : null,
    headersTimeout: timeoutMs, bodyTimeout: timeoutMs,
  };
  if (clientHost !== undefined) (options as { servername?: string }).servername = pinnedServerName(up);
  a.span?.request(plan.model, plan.stream, options.headers, { host });
  a.meter.request(plan.model);
  // Provider health: every attempt that reaches the provider ends in exactly one answered/failed/abandoned.
  const tracked: Tracked = { index: gw.health.indexOf(a.provider.name), started: 0, spec: policy?.health, interrupt: undefined };
  tracked.started = gw.health.begin(tracked.index);
  // With another provider to go to, a stall eviction of this one ends the wait at once (provider-health.ts, HeadWait).
  const failsOver = a.schedule.canFailOver();
  if (failsOver) gw.health.waitHead(tracked.index, tracked);
  if (!plan.stream && plan.upstreamFormat !== 'passthrough') {
    let answer: Awaited<ReturnType<typeof bufferedRequest>>;
    try {
      answer = await bufferedRequest(dispatcher, options, a.sink, gw.maxResponseBytes, failsOver ? tracked : undefined);
    } catch (err) {
      attemptFailed(gw, tracked, err, a.sink.closed);
      throw err;
    }
    if (failsOver) gw.health.headDone(tracked.index, tracked);
    const status = answer.statusCode;
    const headers = answer.headers as Record<string, string | string[] | undefined>;
    gw.health.answered(tracked.index, tracked.started, status, headers, tracked.spec);
    // Nothing reached the client yet: the caller may try another provider; keep the answer for the last one.
    if (a.schedule.holdsBack(status)) return { kind: 'retryable', status, answer: async () => sendBuffered(a, plan, status, headers, answer.body, secrets) };
    const sent = sendBuffered(a, plan, status, headers, answer.body, secrets);
    return { kind: 'answered', status: typeof sent === 'number' ? sent : await sent };
  }
  // Streams and passthrough go through undici's stream API, which takes an AbortSignal.
  const abort = new AbortController();
  const stopListening = a.sink.onAbort(() => abort.abort());
  if (failsOver) tracked.interrupt = (err) => abort.abort(err);
  try {
    return await streamAttempt(a, plan, dispatcher, { ...options, signal: abort.signal }, secrets, tracked);
  } finally {
    stopListening();
  }
}
