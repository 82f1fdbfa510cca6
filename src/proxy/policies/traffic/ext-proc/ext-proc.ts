/**
 * traffic.extProc: an Envoy ext_proc session per request (src/proxy/ext/extproc), wired into the
 * pipeline phase by phase:
 *
 *   request headers  the upstream headers (plus :method, :path, :authority, :scheme) go to the
 *                    processor; its mutations apply upstream, an ImmediateResponse answers.
 *   request body     Buffered: read under the frontend's buffer limit (413 past it), processed
 *                    whole before anything goes upstream, then sent with its new length.
 *                    FullDuplexStreamed / BufferedPartial (or a mode the processor may still
 *                    override): streamed through the session as `upstream.bodyStream`; an answer or
 *                    failure mid-stream becomes `upstream.answer`, which the Exchange sends.
 *   trailers         sent when the body ends, if the message has any and the trailer mode is Send
 *                    (the default): the processor's mutations apply to the response trailers; the
 *                    request's are shown to the processor only (no request trailers go upstream),
 *                    and only when the request body passes through the session (mode not None).
 *   response         a ResponseFilter: headers (may answer instead), then the body and trailers;
 *                    `responseAttributes` are evaluated with the response's status and headers.
 *   end of request   the session closes (PolicyContext.onEnd), however the request ended.
 *
 * The processor's dynamic metadata is the `extproc` CEL variable for later steps. FailOpen is
 * the session's: it holds only until the request body starts streaming; after that a failing
 * processor fails the request (500) — FailClosed (the default) does so from the start.
 * Pseudo-header mutations (`:path`, `:status`) are not applied.
 */
import type { ExtProcPolicy } from '../../../../ir/policy.ts';
import type { ExtProcClient, ExtProcConfig, ExtProcSession } from '../../../ext/extproc/index.ts';
import { extProcModule } from './outcomes.ts';
import { activationOf } from '../../cel.ts';
import { conditionalStep, type RunPolicy } from '../../conditional/conditional.ts';
import type { PolicyContext } from '../../context.ts';
import { CONTINUE, type PolicyResult } from '../../result.ts';
import type { StepCompiler, StepDeps } from '../../step.ts';
import { collectBody, immediateAnswer, oneChunk, replaceHeaders, requestFailure } from './outcomes.ts';
import { extProcResponseFilter } from './response-filter.ts';
import { endCall, startPolicyCall } from '../../../telemetry/tracing/request-trace.ts';

/** The span of the ext_proc session on traced requests (telemetry/tracing). */
const EXT_PROC_SPAN = { 'switchboard.policy': 'extProc' } as const;

/** What the configured modes decide once, at compile time. */
interface Plan {
  /** The request body may reach the processor (its mode, or an override, allows it). */
  readonly requestBody: boolean;
  /** Buffer the request body before forwarding anything (configured Buffered). */
  readonly bufferRequestBody: boolean;
  /** Register the response filter: the response path pays for it only when it can matter. */
  readonly response: boolean;
}

export function planOf(config: ExtProcConfig): Plan {
  const o = config.processingOptions ?? {};
  const override = o.allowModeOverride === true;
  const requestBodyMode = o.requestBodyMode ?? 'FullDuplexStreamed';
  return {
    requestBody: override || requestBodyMode !== 'None',
    bufferRequestBody: requestBodyMode === 'Buffered',
    response: override || o.responseHeaderMode !== 'Skip' || (o.responseBodyMode ?? 'FullDuplexStreamed') !== 'None',
  };
}

function requestHeaderBlock(ctx: PolicyContext): Record<string, string | string[]> {
  const authority = ctx.downstreamHeaders[':authority'] ?? ctx.downstreamHeaders.host ?? ctx.host;
  return {
    ':method': ctx.method,
    ':path': ctx.query === '' ? ctx.path : `${ctx.path}?${ctx.query}`,
    ':authority': Array.isArray(authority) ? authority[0] : authority,
    ':scheme': ctx.scheme,
    ...ctx.upstreamHeaders,
  };
}

/** The processed request body upstream; an answer or failure mid-stream is what the client gets. */
async function* answeringFailures(body: AsyncIterable<Uint8Array>, ctx: PolicyContext): AsyncIterable<Uint8Array> {
  try {
    yield* body;
  } catch (err) {
    const failure = requestFailure(err);
    if (failure?.action === 'respond') ctx.upstream.answer = failure.response;
    throw err;
  }
}

/**
 * The client's trailers, read when the body has ended. A copy: the gateway sends no request
 * trailers upstream, so the processor sees them but its changes go nowhere.
 */
function requestTrailersOf(ctx: PolicyContext): () => Record<string, string | string[] | undefined> | undefined {
  return () => {
    const trailers = ctx.requestTrailers?.();
    return trailers ? { ...trailers } as Record<string, string | string[] | undefined> : undefined;
  };
}

async function processRequestBody(session: ExtProcSession, plan: Plan, ctx: PolicyContext, body: AsyncIterable<Uint8Array>): Promise<void> {
  if (plan.bufferRequestBody && !ctx.upstream.bodyStream) {
    // readBody applies the frontend's limit (BodyTooLargeError → 413) and keeps the result replayable.
    const original = await ctx.readBody();
    ctx.replaceBody(await collectBody(session.requestBody(oneChunk(original), requestTrailersOf(ctx))));
    return;
  }
  ctx.upstream.bodyStream = answeringFailures(session.requestBody(body, requestTrailersOf(ctx)), ctx);
  // The processor may change the length chunk by chunk: the upstream gets a chunked body.
  delete ctx.upstreamHeaders['content-length'];
}

async function processRequest(client: ExtProcClient, plan: Plan, ctx: PolicyContext, deps: StepDeps): Promise<PolicyResult> {
  const session = client.session(activationOf(ctx));
  // Traced requests: one span for the session, from its start to the request's end (telemetry/tracing).
  const span = startPolicyCall('ext_proc', EXT_PROC_SPAN);
  ctx.onEnd(() => {
    session.close();
    if (span) endCall(span, {});
  });
  const body = ctx.requestBodyStream();
  try {
    const outcome = await session.requestHeaders(requestHeaderBlock(ctx), body === null);
    if (outcome.kind === 'respond') return { action: 'respond', response: immediateAnswer(outcome.response) };
    replaceHeaders(ctx.upstreamHeaders, outcome.headers);
    // The same object keeps collecting metadata from later answers (body, response).
    ctx.identity.extproc = session.metadata;
    if (body !== null && plan.requestBody) await processRequestBody(session, plan, ctx, body);
  } catch (err) {
    const failure = requestFailure(err);
    if (!failure) throw err;
    if (err instanceof extProcModule().ExtProcError && err.status !== 413) deps.logger.warn({ err: (err as Error).message }, 'external processor failed');
    return failure;
  }
  if (plan.response) ctx.responseFilters.push(extProcResponseFilter(session, ctx.method));
  return CONTINUE;
}

function compileOne(p: ExtProcPolicy, deps: StepDeps, onClose: (close: () => void) => void): RunPolicy {
  const config: ExtProcConfig = p;
  const client = new (extProcModule().ExtProcClient)(config, { resolve: deps.endpoints, connections: deps.connections });
  onClose(() => client.close());
  const plan = planOf(config);
  return (ctx) => processRequest(client, plan, ctx, deps);
}

export const compileExtProc: StepCompiler<'extProc'> = (member, deps) =>
  conditionalStep<ExtProcPolicy>('extProc', member, (p, _where, onClose) => compileOne(p, deps, onClose));
