/**
 * One AI backend served in-process: route type by path, `policies.ai` on the body, the plan from
 * the translation core, credentials, then the provider — trying the next provider (and the next
 * priority group) when an attempt fails before anything reached the client — with the answer
 * translated back, streams event by event. Every failure reaches the client in its own format.
 */
import { STATUS_CODES, type IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import type { Dispatcher } from 'undici';
import type { Logger } from '../../../common/logger.ts';
import type { CelInput } from '../../../cel/index.ts';
import type { AiBackendIR, AiPolicy, AiProviderIR, RouteType } from '../../../ir/ai.ts';
import type { BackendPolicy } from '../../../ir/policy.ts';
import type { HandlerRequest } from '../../backends/handlers.ts';
import { formatOfRouteType } from '../../backends/client-format.ts';
import type { DownstreamRequest, DownstreamResponse } from '../../http/downstream.ts';
import { BodyTooLargeError, type PolicyContext, type RequestIdentity } from '../../policies/context.ts';
import { renderError, type ErrorFormat } from '../translate/errors.ts';
import { planRequest, type ClientResponse, type ForwardPlan } from '../translate/plan.ts';
import { llmAttemptSpan, type LlmAttemptSpan } from '../../telemetry/tracing/genai.ts';
import type { Usage } from '../translate/usage.ts';
import { AiPolicyError, applyFinalTransformations, applyRequestPolicy, compileAiPolicy, hasRequestPolicy } from './body-policy.ts';
import { ClientSink, readRequestBody } from './client-io.ts';
import { CredentialError, LlmCredentials } from './credentials/index.ts';
import { ProviderPicker, type ProviderChoice } from './picker.ts';
import { ModelRouter } from './model-router.ts';
import { ProviderHealth, type ProviderHealthBoard } from './provider-health.ts';
import { inSlices } from './stream-slices.ts';
import { backoff, isFailoverStatus, ProviderSchedule, type AttemptFailure } from './failover.ts';
import { RealtimeRelay, type RealtimeAttempt } from './realtime.ts';
import { routeTypeFor } from '../translate/route-type.ts';
import { bufferedRequest, clientHostFor, ClientGoneError, hostHeader, pinnedServerName, ProviderPools, ReplicaTurns } from './upstream.ts';
import { MAX_PROVIDER_RESPONSE_BYTES, readProviderAnswer, ResponseTooLargeError } from './bounded-body.ts';
import { maskSecrets, sentSecrets } from './credential-mask.ts';
import { policyHeaderChanges } from '../../policies/backend/policy-headers.ts';
import { subBackendPolicy } from '../../policies/backend/sub-backend.ts';
import { applyHeaderChanges, dropClientCredentials, gateProviderCall, providerHasOwnCredential, type PolicyGate } from './backend-policy.ts';
import type { CompiledBackendPolicy } from '../../policies/backend/compile.ts';
import type { DirectResponse } from '../../policies/result.ts';
import { renderGatewayError } from '../../http/error-format.ts';
import { jsonTooDeep, TOO_DEEP_MESSAGE } from '../../http/json-depth.ts';
import { GUARD_REJECTED, GUARDED_REQUEST_ROUTES, GUARDED_RESPONSE_ROUTES, GuardConfigError, guardJsonBody, promptGuardOf, StreamGuard, type BodyGuardOutcome, type CompiledPromptGuard, type GuardRun, type StreamVerdict } from './guards/index.ts';
import { LlmCallMeter } from '../../telemetry/ai-metrics.ts';
import { clientBodyFacts, llmInput, type LlmFacts } from './llm-cel.ts';

const DEFAULT_TIMEOUT_MS = 300_000;
/** Client headers worth keeping on a translated request: they select API features, not identity. */
const FORWARDED_TO_MESSAGES = ['anthropic-beta'] as const;
const HOP_BY_HOP = new Set(['connection', 'keep-alive', 'proxy-connection', 'transfer-encoding', 'upgrade', 'te', 'trailer', 'host', 'content-length', ':authority', ':method', ':path', ':scheme']);

export interface LlmHandlerDeps {
  readonly logger: Logger;
  readonly credentials?: LlmCredentials;
  /** Cap on a buffered provider answer; default MAX_PROVIDER_RESPONSE_BYTES. */
  readonly maxResponseBytes?: number;
  /** Where provider health lives across handlers (admin API, metrics); without it the handler keeps its own. */
  readonly providerHealth?: ProviderHealthBoard;
  /** How a group's first provider is chosen: by health (default) or in plain rotation (benchmarks compare the two). */
  readonly providerChoice?: ProviderChoice;
}

/** A failed attempt kept for the last one; `answer` sends it and resolves with the status the client got. */
interface Retryable { readonly kind: 'retryable'; readonly status: number; readonly answer: () => Promise<number> }
/** Routes whose body is not JSON for the gateway: forwarded or ignored as they are. */
const OPAQUE_BODY_ROUTES = new Set<RouteType>(['Passthrough', 'Realtime', 'Models']);
type Outcome = { readonly kind: 'answered'; readonly status: number } | Retryable;
/** Per request, made on first use (only requests whose provider policy transforms bodies pay for it): the body each compiled policy's transformation made. */
const transformedBodies = new WeakMap<PolicyContext, Map<CompiledBackendPolicy, Buffer>>();
/** Request guards' outcome per body and guard list, so a failover under the same guards does not judge (or call a guard service) again. */
const guardedBodies = new WeakMap<Uint8Array, Map<CompiledPromptGuard, BodyGuardOutcome>>();
/** The prompt guards whose response guards judge a plan's answer (set only for plans that have some). */
const answerGuards = new WeakMap<ForwardPlan, CompiledPromptGuard>();

export class LlmBackendHandler {
  readonly #ir: AiBackendIR;
  readonly #logger: Logger;
  readonly #picker: ProviderPicker;
  /** ProxyModels only (ir.models): the request's model chooses the picker (model-router.ts). */
  readonly #router: ModelRouter | undefined;
  /** Scores, latency, evictions of the providers (provider-health.ts); fed by every attempt. */
  readonly #health: ProviderHealth;
  readonly #healthBoard: ProviderHealthBoard | undefined;
  readonly #pools = new ProviderPools();
  readonly #replicas = new ReplicaTurns();
  readonly #credentials: LlmCredentials;
  readonly #maxResponseBytes: number;
  #realtime: RealtimeRelay | undefined;

  constructor(ir: AiBackendIR, deps: LlmHandlerDeps) {
    this.#ir = ir;
    this.#logger = deps.logger;
    const names = [...ir.groups, ...(ir.models ?? []).flatMap((m) => m.groups)].flatMap((g) => g.providers.map((p) => p.name));
    this.#healthBoard = deps.providerHealth;
    this.#health = deps.providerHealth?.attach(ir.key, names) ?? new ProviderHealth(ir.key, names);
    this.#picker = new ProviderPicker(ir.groups, deps.providerChoice === 'rotation' ? undefined : this.#health);
    this.#router = ir.models ? new ModelRouter(ir.models, deps.providerChoice === 'rotation' ? undefined : this.#health) : undefined;
    this.#credentials = deps.credentials ?? new LlmCredentials();
    this.#maxResponseBytes = deps.maxResponseBytes ?? MAX_PROVIDER_RESPONSE_BYTES;
  }

  async close(): Promise<void> {
    this.#healthBoard?.detach(this.#health);
    await Promise.all([this.#pools.close(), this.#realtime?.close()]);
  }

  /**
   * A WebSocket upgrade: only the Realtime route takes one (realtime.ts); anything else is refused
   * with a 400 in OpenAI's error format. Providers are tried in the same order as requests.
   */
  upgrade(req: IncomingMessage, socket: Duplex, head: Buffer, request: HandlerRequest): Promise<void> {
    const backendAi = aiOf(request.backendPolicy) ?? this.#ir.policy;
    if (routeTypeFor(request.path, backendAi?.routes) !== 'Realtime') {
      const r = renderError({ status: 400, message: 'only the Realtime route accepts WebSocket upgrades on this backend' }, 'openai');
      socket.end(`HTTP/1.1 400 Bad Request\r\ncontent-type: application/json\r\ncontent-length: ${r.body.length}\r\nconnection: close\r\n\r\n${Buffer.from(r.body).toString('utf8')}`);
      request.done(400, r.body.length);
      return Promise.resolve();
    }
    this.#realtime ??= new RealtimeRelay({
      backendKey: this.#ir.key, logger: this.#logger, credentials: this.#credentials, replicas: this.#replicas,
      account: (provider, model, usage, policy) => this.#log(provider, 'Realtime', model, true, usage, policy),
    });
    const attempts = this.#picker.order().map((provider) => {
      const policy = effectivePolicy(request.backendPolicy, provider);
      return { provider, policy, ai: aiOf(policy) ?? this.#ir.policy };
    });
    return this.#gateUpgrade(socket, request, attempts).then((gated) => (gated === undefined ? undefined : this.#realtime?.serve(req, socket, head, request, gated)));
  }

  /**
   * The backend-policy layer before a Realtime relay: every provider it may try must pass (an
   * invalid policy or an extAuth refusal on any of them refuses the upgrade, nothing sent). Each
   * attempt gets the header changes its request steps made, for the relayed handshake. Resolves
   * undefined when refused (the answer written).
   */
  async #gateUpgrade(socket: Duplex, request: HandlerRequest, attempts: readonly RealtimeAttempt[]): Promise<RealtimeAttempt[] | undefined> {
    const ran = new Map<CompiledBackendPolicy, PolicyGate>();
    const gated: RealtimeAttempt[] = [];
    for (const attempt of attempts) {
      const gating = gateProviderCall(request.backendRuntime?.subBackend(attempt.provider.name), attempt.policy, request.policy, ran);
      const gate = gating instanceof Promise ? await gating : gating;
      if (gate.kind === 'passed') {
        gated.push({ ...attempt, stepHeaders: gate.headers });
        continue;
      }
      const response = gate.response;
      const body = response.error ? renderGatewayError(response.status, response.error, 'openai') : String(response.body ?? '');
      const length = Buffer.byteLength(body);
      socket.end(`HTTP/1.1 ${response.status} ${STATUS_CODES[response.status] ?? ''}\r\ncontent-type: application/json\r\ncontent-length: ${length}\r\nconnection: close\r\n\r\n${body}`);
      request.done(response.status, length);
      return undefined;
    }
    return gated;
  }

  /** Serves one request; resolves with the status the client saw and the body bytes written. */
  async serve(req: DownstreamRequest, res: DownstreamResponse, request: HandlerRequest): Promise<{ status: number; bytes: number }> {
    const sink = new ClientSink(res);
    const backendAi = aiOf(request.backendPolicy) ?? this.#ir.policy;
    const route = routeTypeFor(request.path, backendAi?.routes);
    const format = errorFormatOf(route, req.headers['anthropic-version']);
    if (this.#router && route === 'Models') {
      // ProxyModels: the gateway's own list of models (model-router.ts), no vendor asked.
      sink.send(200, { 'content-type': 'application/json' }, this.#router.catalog(req.headers['anthropic-version'] !== undefined));
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

    let picker = this.#picker;
    if (this.#router) {
      const choice = this.#router.choose(body);
      if (choice.kind === 'no-model') return fail(400, 'the request body must name a model');
      if (choice.kind === 'unknown') return fail(404, `the model ${JSON.stringify(choice.model.slice(0, 256))} does not exist`, 'model_not_found');
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
      const meter = new LlmCallMeter(this.#ir.key, provider, route);
      try {
        const outcome = await this.#attempt({ req, request, sink, route, body, provider, format, ran, schedule, span, meter });
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
          this.#logger.error({ backend: this.#ir.key, provider: provider.name, err: err.message }, 'LLM provider credentials unavailable');
          last = { kind: 'retryable', status: 502, answer: async () => fail(502, 'the gateway could not authenticate to the provider').status };
        } else if (err instanceof ResponseTooLargeError) {
          this.#logger.warn({ backend: this.#ir.key, provider: provider.name, limit: err.limit }, 'LLM provider answer over the buffer limit; aborted');
          const message = err.message;
          last = { kind: 'retryable', status: 502, answer: async () => fail(502, message).status };
        } else if (sink.started) {
          throw err;
        } else if (replicasLeft > 0 && isConnectFailure(err)) {
          // Nothing was sent: another replica of the same Service gets the request (ReplicaTurns moves on).
          this.#logger.warn({ backend: this.#ir.key, provider: provider.name, err: String(err) }, 'LLM provider replica unreachable; trying the next replica');
          replicasLeft--;
          continue;
        } else {
          const timeout = isTimeout(err);
          this.#logger.warn({ backend: this.#ir.key, provider: provider.name, err: String(err) }, 'LLM provider unreachable');
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
      this.#logger.warn({ backend: this.#ir.key, provider: provider.name, status: last.status, next: next.provider.name, retry: next.retry }, next.retry ? 'LLM provider attempt failed; retrying (traffic.retry)' : 'LLM provider failed; trying the next one');
      await backoff(next.delayMs, sink);
      provider = next.provider;
    }
    if (sink.closed) return { status: 499, bytes: sink.bytes };
    if (!last) return fail(503, 'no provider is available');
    const sent = await last.answer();
    return { status: sent, bytes: sink.bytes };
  }

  async #attempt(a: Attempt): Promise<Outcome> {
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
      if (err instanceof BodyTooLargeError) return { kind: 'answered', status: this.#refuse(a, { status: 413, error: { code: 'payload_too_large', message: err.message } }) };
      this.#logger.error({ backend: this.#ir.key, provider: a.provider.name, err: String(err) }, 'backend policy failed on an LLM provider call');
      return { kind: 'answered', status: this.#refuse(a, { status: 500, error: { code: 'backend_policy_failed', message: 'the backend policy could not be applied' } }) };
    }
    if (gate.kind === 'refused') return { kind: 'answered', status: this.#refuse(a, gate.response) };
    const body = transformsBody ? await this.#transformedBody(runtime, ctx) : a.body;
    if (body !== a.body && !OPAQUE_BODY_ROUTES.has(a.route) && jsonTooDeep(body)) {
      return { kind: 'answered', status: this.#refuse(a, { status: 400, error: { code: 'bad_request', message: TOO_DEEP_MESSAGE } }) };
    }
    const ai = aiOf(policy) ?? this.#ir.policy;
    const compiled = ai ? compileAiPolicy(ai) : undefined;
    const guard = guardsOf(ai);
    let guardedBody: Uint8Array = body;
    // Request guards judge the client's request (after the traffic and backend request steps, before prompt
    // enrichment and defaults, which are the operator's own text) before this provider is called.
    if (guard && guard.request.length > 0 && GUARDED_REQUEST_ROUTES.has(a.route)) {
      const checked = await this.#guardRequest(a, guard, body);
      if (checked.kind === 'reject') {
        this.#logger.info({ backend: this.#ir.key, route: a.route, guard: checked.guard, failed: checked.failed }, 'prompt guard rejected a request');
        return { kind: 'answered', status: this.#refuse(a, { status: checked.status, error: { code: GUARD_REJECTED, message: checked.message } }) };
      }
      guardedBody = checked.body;
    }
    // `llm` as far as each phase sees it (llm-cel.ts): the client's body first, the plan after.
    const cel = (facts: Omit<LlmFacts, 'provider'>): CelInput => ({ ...(a.request.policy?.cel() ?? requestCel(a.req)), llm: llmInput({ provider: a.provider.name, ...facts }) });
    const clientBody = compiled && hasRequestPolicy(compiled) ? rewriteJson(guardedBody, (b) => applyRequestPolicy(b, a.route, compiled, cel(clientBodyFacts(b)))) : guardedBody;
    const plan = planRequest({
      routeType: a.route, provider: a.provider.provider, body: clientBody, path: a.request.path, method: a.req.method,
      modelAliases: ai?.modelAliases, promptCaching: ai?.promptCaching, headers: plainHeaders(a.req.headers),
    });
    if (plan.kind === 'respond') {
      a.sink.send(plan.response.status, plan.response.headers, plan.response.body);
      this.#account(a, plan.response.usage, undefined);
      return { kind: 'answered', status: plan.response.status };
    }
    if (guard && guard.response.length > 0 && GUARDED_RESPONSE_ROUTES.has(a.route)) answerGuards.set(plan, guard);
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
    applyHeaderChanges(baseHeaders, gate.headers, HOP_BY_HOP);
    applyHeaderChanges(baseHeaders, policyHeaderChanges(a.req.headers, a.request.headers, a.request.headersMayHaveChanged === true || gate.headers.size > 0));
    const identity: RequestIdentity = a.request.policy?.identity ?? {};
    const signing = this.#credentials.apply({ host, method: up.method, path: up.path, headers: baseHeaders, body: upstreamBody, credential: up.credential }, policy?.auth, identity, () => cel({ requestModel: plan.model, streaming: plan.stream }));
    // Keys and fixed-key signing are synchronous: no promise hop for them.
    const signed = signing instanceof Promise ? await signing : signing;
    // What the provider answers in an error may echo these; the client must not see them.
    const secrets = sentSecrets({ headers: baseHeaders, path: up.path }, signed);
    const timeoutMs = policy?.http?.requestTimeoutMs ?? DEFAULT_TIMEOUT_MS;
    const dispatcher = this.#pools.acquire(this.#replicas.target(a.provider, up), policy);
    const options = {
      method: up.method as 'POST', path: signed.path, headers: { ...signed.headers, host }, body: upstreamBody.length > 0 ? upstreamBody : null,
      headersTimeout: timeoutMs, bodyTimeout: timeoutMs,
    };
    if (clientHost !== undefined) (options as { servername?: string }).servername = pinnedServerName(up);
    a.span?.request(plan.model, plan.stream, options.headers, { host });
    a.meter.request(plan.model);
    // Provider health: every attempt that reaches the provider ends in exactly one answered/failed/abandoned.
    const tracked: Tracked = { index: this.#health.indexOf(a.provider.name), started: 0, spec: policy?.health };
    tracked.started = this.#health.begin(tracked.index);
    if (!plan.stream && plan.upstreamFormat !== 'passthrough') {
      let answer: Awaited<ReturnType<typeof bufferedRequest>>;
      try {
        answer = await bufferedRequest(dispatcher, options, a.sink, this.#maxResponseBytes);
      } catch (err) {
        this.#attemptFailed(tracked, err, a.sink.closed);
        throw err;
      }
      const status = answer.statusCode;
      const headers = answer.headers as Record<string, string | string[] | undefined>;
      this.#health.answered(tracked.index, tracked.started, status, headers, tracked.spec);
      // Nothing reached the client yet: the caller may try another provider; keep the answer for the last one.
      if (a.schedule.holdsBack(status)) return { kind: 'retryable', status, answer: async () => this.#sendBuffered(a, plan, status, headers, answer.body, secrets) };
      const sent = this.#sendBuffered(a, plan, status, headers, answer.body, secrets);
      return { kind: 'answered', status: typeof sent === 'number' ? sent : await sent };
    }
    // Streams and passthrough go through undici's stream API, which takes an AbortSignal.
    const abort = new AbortController();
    const stopListening = a.sink.onAbort(() => abort.abort());
    try {
      return await this.#stream(a, plan, dispatcher, { ...options, signal: abort.signal }, secrets, tracked);
    } finally {
      stopListening();
    }
  }

  async #stream(a: Attempt, plan: ForwardPlan, dispatcher: Dispatcher, options: Dispatcher.RequestOptions, secrets: readonly string[], tracked: Tracked): Promise<Outcome> {
    let response: Dispatcher.ResponseData;
    try {
      response = await dispatcher.request(options);
    } catch (err) {
      this.#attemptFailed(tracked, err, a.sink.closed);
      throw err;
    }
    const status = response.statusCode;
    const headers = response.headers as Record<string, string | string[] | undefined>;
    this.#health.answered(tracked.index, tracked.started, status, headers, tracked.spec);
    if (a.schedule.holdsBack(status)) {
      const raw = await readProviderAnswer(response.body, this.#maxResponseBytes);
      return { kind: 'retryable', status, answer: async () => this.#sendBuffered(a, plan, status, headers, raw, secrets) };
    }
    if (plan.upstreamFormat === 'passthrough') {
      a.sink.head(status, pickHeaders(headers, ['content-type', 'cache-control']));
      for await (const chunk of response.body) await a.sink.write(chunk as Buffer);
      a.sink.end();
      return { kind: 'answered', status };
    }
    if (!plan.stream || status >= 300) {
      const sent = this.#sendBuffered(a, plan, status, headers, await readProviderAnswer(response.body, this.#maxResponseBytes), secrets);
      return { kind: 'answered', status: typeof sent === 'number' ? sent : await sent };
    }
    const translator = plan.createStreamTranslator();
    a.sink.head(status, plan.streamHeaders);
    // `streaming: Enabled`: response guards judge the text before each chunk is written (guards/stream.ts).
    const streamGuard = this.#streamGuard(a, plan, headers);
    let rejected = false;
    try {
      // A large read's first events are written before the rest of it is translated (stream-slices.ts).
      for await (const chunk of inSlices(response.body, () => a.sink.flush())) {
        // An error event mid-stream may echo the key too (a key split across chunks is not caught).
        for (const out of translator.push(chunk as Buffer)) {
          a.span?.chunk(out);
          a.meter.chunk();
          const pass = streamGuard ? await this.#streamPasses(a, streamGuard.check(out)) : out;
          if (!pass) { rejected = true; break; }
          // A guard judging in batches holds output back (an empty write would still cost a round).
          if (pass.length > 0) await a.sink.write(maskSecrets(pass, secrets));
        }
        // The stream failed (an error event was written): stop reading, which closes the upstream.
        if (rejected || translator.done === true) break;
      }
    } catch (err) {
      // The upstream stream broke (reset, idle timeout): `end` renders the cut as an error event.
      if (!a.sink.closed) this.#health.cut(tracked.index, tracked.spec);
      this.#logger.warn({ backend: this.#ir.key, provider: a.provider.name, err: String(err) }, 'LLM upstream stream failed');
    }
    if (!rejected) for (const out of translator.end()) {
      a.span?.chunk(out);
      const pass = streamGuard ? await this.#streamPasses(a, streamGuard.check(out)) : out;
      if (!pass) { rejected = true; break; }
      if (pass.length > 0) await a.sink.write(maskSecrets(pass, secrets));
    }
    const rest = streamGuard && !rejected ? await this.#streamPasses(a, streamGuard.flush()) : undefined;
    if (rest && rest.length > 0) await a.sink.write(maskSecrets(rest, secrets));
    a.sink.end();
    this.#account(a, translator.usage(), plan);
    return { kind: 'answered', status };
  }

  /** An attempt that got no answer: the provider's failure (502/504 as the client would see it), unless the client left or the answer was too large (neither says anything about the provider). */
  #attemptFailed(tracked: Tracked, err: unknown, clientGone: boolean): void {
    if (clientGone || err instanceof ClientGoneError || err instanceof ResponseTooLargeError) this.#health.abandon(tracked.index, tracked.started);
    else this.#health.failed(tracked.index, tracked.started, isTimeout(err) ? 504 : 502, tracked.spec);
  }

  /** The body after this provider's backend transformation, kept per compiled policy for a failover under the same one. */
  async #transformedBody(runtime: CompiledBackendPolicy, ctx: PolicyContext): Promise<Buffer> {
    let made = transformedBodies.get(ctx);
    const known = made?.get(runtime);
    if (known) return known;
    const body = await ctx.readBody();
    if (!made) transformedBodies.set(ctx, (made = new Map()));
    made.set(runtime, body);
    return body;
  }

  /** Answers from the gateway in the client's format (a gateway error) or as the policy wrote it (an ext_authz denial); returns the status. */
  #refuse(a: Attempt, response: DirectResponse): number {
    const headers: Record<string, string> = {};
    for (const [name, value] of Object.entries(response.headers ?? {})) headers[name.toLowerCase()] = typeof value === 'string' ? value : value.join(', ');
    let body: Uint8Array;
    if (response.error) {
      headers['content-type'] = 'application/json';
      body = Buffer.from(renderGatewayError(response.status, response.error, a.format));
    } else body = typeof response.body === 'string' ? Buffer.from(response.body) : (response.body ?? Buffer.alloc(0));
    a.sink.refuse(response.status, headers, body);
    return response.status;
  }

  /**
   * Translates and sends a buffered answer; returns the status the client got (a translation failure turns a 200 into a 502).
   * Response guards judge a successful answer first (a promise only then): masked text is sent, a rejection answers instead.
   */
  #sendBuffered(a: Attempt, plan: ForwardPlan, status: number, headers: Record<string, string | string[] | undefined>, raw: Uint8Array, secrets: readonly string[]): number | Promise<number> {
    const r: ClientResponse = plan.translateResponse(status, headers, raw);
    a.span?.body(r.body);
    const guard = r.status < 300 ? answerGuards.get(plan) : undefined;
    if (guard) return this.#sendGuarded(a, plan, r, guard, headers);
    a.sink.send(r.status, r.headers, r.status >= 400 ? maskSecrets(r.body, secrets) : r.body);
    this.#account(a, r.usage, plan);
    return r.status;
  }

  async #sendGuarded(a: Attempt, plan: ForwardPlan, r: ClientResponse, guard: CompiledPromptGuard, headers: GuardRun['headers']): Promise<number> {
    this.#account(a, r.usage, plan);
    const checking = guardJsonBody(guard.response, a.route, r.body, this.#guardRun(a, 'response', headers, false));
    const checked = checking instanceof Promise ? await checking : checking;
    if (checked.kind === 'reject') {
      this.#logger.info({ backend: this.#ir.key, provider: a.provider.name, route: a.route, guard: checked.guard, failed: checked.failed }, 'prompt guard rejected an answer');
      return this.#refuse(a, { status: checked.status, error: { code: GUARD_REJECTED, message: checked.message } });
    }
    a.sink.send(r.status, checked.body === r.body ? r.headers : withoutLength(r.headers), checked.body);
    return r.status;
  }

  /** The request guards' outcome for this body (once per body and guard list, failover included). */
  async #guardRequest(a: Attempt, guard: CompiledPromptGuard, body: Uint8Array): Promise<BodyGuardOutcome> {
    let known = guardedBodies.get(body);
    const seen = known?.get(guard);
    if (seen) return seen;
    const checking = guardJsonBody(guard.request, a.route, body, this.#guardRun(a, 'request', a.req.headers, false));
    const checked = checking instanceof Promise ? await checking : checking;
    if (!known) guardedBodies.set(body, (known = new Map()));
    known.set(guard, checked);
    return checked;
  }

  #streamGuard(a: Attempt, plan: ForwardPlan, headers: GuardRun['headers']): StreamGuard | undefined {
    const guard = answerGuards.get(plan);
    if (!guard?.streaming) return undefined;
    const { signal, onFailure } = this.#guardRun(a, 'response', headers, true);
    return new StreamGuard(guard.response, a.route, { headers, signal, ...(onFailure ? { onFailure } : {}) });
  }

  /** The bytes to write now, or undefined when the guards rejected them: the error event was written in their place. */
  async #streamPasses(a: Attempt, checking: StreamVerdict | Promise<StreamVerdict>): Promise<Uint8Array | undefined> {
    const verdict = checking instanceof Promise ? await checking : checking;
    if (verdict.kind === 'write') return verdict.bytes;
    this.#logger.info({ backend: this.#ir.key, provider: a.provider.name, route: a.route }, 'prompt guard rejected a streamed answer');
    await a.sink.write(verdict.rejection);
    return undefined;
  }

  #guardRun(a: Attempt, phase: GuardRun['phase'], headers: GuardRun['headers'], streaming: boolean): GuardRun {
    const abort = new AbortController();
    // Guard services stop waiting when the client leaves.
    if (a.sink.closed) abort.abort();
    else a.sink.onAbort(() => abort.abort());
    return {
      phase, headers, streaming, signal: abort.signal,
      onFailure: (g, err) => this.#logger.warn({ backend: this.#ir.key, provider: a.provider.name, guard: g.kind, phase, failOpen: g.failOpen, err: String(err) }, 'prompt guard failed'),
    };
  }

  #account(a: Attempt, usage: Usage | undefined, plan: ForwardPlan | undefined): void {
    if (!usage) return;
    a.span?.usage(usage);
    a.meter.usage(usage);
    this.#log(a.provider.name, a.route, plan?.model, plan?.stream ?? false, usage, a.request.policy);
  }

  #log(provider: string, route: RouteType, model: string | undefined, streaming: boolean, usage: Usage, policy: PolicyContext | undefined): void {
    // The log object is built only when it will be written (usage logs are info; benches run at warn).
    if (this.#logger.isLevelEnabled('info')) this.#logger.info({
      backend: this.#ir.key, 'llm.provider': provider, 'llm.route': route, 'llm.model': model, 'llm.streaming': streaming,
      'llm.inputTokens': usage.inputTokens, 'llm.outputTokens': usage.outputTokens, 'llm.totalTokens': usage.totalTokens,
      ...(usage.cachedInputTokens !== undefined ? { 'llm.cachedInputTokens': usage.cachedInputTokens } : {}),
      ...(usage.reasoningTokens !== undefined ? { 'llm.reasoningTokens': usage.reasoningTokens } : {}),
    }, 'llm usage');
    const ctx = policy as { reportUsage?: (u: { inputTokens: number; outputTokens: number; totalTokens: number }) => void } | undefined;
    ctx?.reportUsage?.({ inputTokens: usage.inputTokens, outputTokens: usage.outputTokens, totalTokens: usage.totalTokens });
  }
}

/** One attempt as provider health follows it. */
interface Tracked {
  readonly index: number;
  started: number;
  readonly spec: BackendPolicy['health'];
}

interface Attempt {
  readonly req: DownstreamRequest;
  readonly request: HandlerRequest;
  readonly sink: ClientSink;
  readonly route: RouteType;
  readonly body: Buffer;
  readonly provider: AiProviderIR;
  readonly format: ErrorFormat;
  /** The backend policies already run for this request (failover to a provider under the same one does not rerun them). */
  readonly ran: Map<CompiledBackendPolicy, PolicyGate>;
  /** Failover and retry (failover.ts): which answers are held back for another attempt. */
  readonly schedule: ProviderSchedule;
  /** Present when the request is traced. */
  readonly span: LlmAttemptSpan | undefined;
  readonly meter: LlmCallMeter;
}

/** The policy's compiled prompt guards; a guard that cannot be compiled fails the request closed (500, logged once per request). */
function guardsOf(ai: AiPolicy | undefined): CompiledPromptGuard | undefined {
  try {
    return promptGuardOf(ai);
  } catch (err) {
    if (err instanceof GuardConfigError) throw new AiPolicyError(err.message, 500);
    throw err;
  }
}

/** A masked body has a new length: the framing is recomputed from the body. */
function withoutLength(headers: Readonly<Record<string, string>>): Record<string, string> {
  const { 'content-length': _length, ...rest } = headers;
  return rest;
}

/** The CEL input of a request no traffic policy saw (no policy context was made for it). */
function requestCel(req: DownstreamRequest): CelInput {
  return {
    request: { method: req.method ?? 'POST', url: req.url ?? '/', headers: req.headers },
    source: { address: req.socket.remoteAddress ?? '', port: req.socket.remotePort ?? 0 },
  };
}

function aiOf(policy: BackendPolicy | undefined): AiPolicy | undefined {
  return policy?.ai;
}

/**
 * The provider's effective backend policy: the translator wrote each provider's complete policy
 * (policy objects < backend inline < sectionName < the provider's own `policies`) into the route
 * policy's `subBackends`, so this only looks it up (policies/backend/sub-backend.ts).
 */
export function effectivePolicy(backend: BackendPolicy | undefined, provider: AiProviderIR): BackendPolicy | undefined {
  return subBackendPolicy(backend, provider.name, provider.policies);
}

/** The same rule the pipeline renders its own errors by (backends/client-format.ts), so both agree. */
const errorFormatOf: (route: RouteType, anthropicVersion: unknown) => ErrorFormat = formatOfRouteType;

/** Applies `edit` to a JSON object body; a body that is not a JSON object is left for the planner to reject. */
function rewriteJson(bytes: Uint8Array, edit: (body: Record<string, unknown>) => Record<string, unknown>): Uint8Array {
  let parsed: unknown;
  if (jsonTooDeep(bytes)) return bytes;
  try {
    parsed = JSON.parse(Buffer.from(bytes).toString('utf8'));
  } catch {
    return bytes;
  }
  if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed)) return bytes;
  return Buffer.from(JSON.stringify(edit(parsed as Record<string, unknown>)));
}

/** Node's header names are already lowercase; only repeated values (arrays) need joining. */
function plainHeaders(h: DownstreamRequest['headers']): Record<string, string | undefined> {
  for (const k in h) if (typeof h[k] !== 'string' && h[k] !== undefined) return joinRepeated(h);
  return h as Record<string, string | undefined>;
}

function joinRepeated(h: DownstreamRequest['headers']): Record<string, string | undefined> {
  const out: Record<string, string | undefined> = {};
  for (const [k, v] of Object.entries(h)) out[k.toLowerCase()] = Array.isArray(v) ? v.join(', ') : v;
  return out;
}

function passthroughHeaders(h: Readonly<Record<string, string | string[]>>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(h)) if (!HOP_BY_HOP.has(k.toLowerCase())) out[k.toLowerCase()] = Array.isArray(v) ? v.join(', ') : v;
  return out;
}

function pickHeaders(h: Record<string, string | string[] | undefined>, names: readonly string[]): Record<string, string> {
  const out: Record<string, string> = {};
  for (const n of names) {
    const v = h[n];
    if (v !== undefined) out[n] = Array.isArray(v) ? v.join(', ') : v;
  }
  return out;
}

/** The connection itself failed (nothing reached the provider): safe to send the request elsewhere. */
function isConnectFailure(err: unknown): boolean {
  const code = (err as { code?: unknown } | undefined)?.code;
  return code === 'ECONNREFUSED' || code === 'EHOSTUNREACH' || code === 'ENETUNREACH' || code === 'UND_ERR_CONNECT_TIMEOUT';
}

function isTimeout(err: unknown): boolean {
  const code = (err as { code?: unknown } | undefined)?.code;
  return code === 'UND_ERR_HEADERS_TIMEOUT' || code === 'UND_ERR_BODY_TIMEOUT' || code === 'UND_ERR_CONNECT_TIMEOUT';
}
