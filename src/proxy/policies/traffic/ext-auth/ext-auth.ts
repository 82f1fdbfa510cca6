/**
 * traffic.extAuth: asks an external authorization service (Envoy ext_authz over gRPC, or the
 * HTTP variant) about each request, with the clients of src/proxy/ext/authz. An allow applies the
 * service's header mutations upstream, its response headers downstream and exposes its metadata
 * as the `extauthz` CEL variable; a denial answers with the service's status, headers and body.
 * `forwardBody` buffers the request body first (larger than `maxSize` → 413). FailOpen/FailClosed
 * for an unavailable service is decided by the client (403 when closed).
 */
import type { ExtAuthPolicy } from '../../../../ir/policy.ts';
import type * as Authz from '../../../ext/authz/index.ts';
import type { AuthzDecision, ExtAuthzClient } from '../../../ext/authz/index.ts';
import type * as ExtHeaders from '../../../ext/headers.ts';
import { lazyModule } from '../../../../common/lazy-module.ts';
import { activationOf } from '../../cel.ts';
import { conditionalStep, type RunPolicy } from '../../conditional/conditional.ts';
import { BodyTooLargeError, type PolicyContext } from '../../context.ts';
import { CONTINUE, respond, respondError, type PolicyResult } from '../../result.ts';
import type { StepCompiler, StepDeps } from '../../step.ts';
import { traceCall } from '../../../telemetry/tracing/request-trace.ts';
import { countPolicyOutcome } from '../../../telemetry/ai-metrics.ts';
import { serviceFailureLog } from '../../service-failure-log.ts';

// The ext_authz clients (gRPC and HTTP) and the header mutations: loaded when a config's extAuth member
// is first compiled (lazy-module.ts); a request reaches applyMutations only through that compile.
const authzModule = lazyModule<typeof Authz>(import.meta.url, '../../../ext/authz/index.ts');
const extHeaders = lazyModule<typeof ExtHeaders>(import.meta.url, '../../../ext/headers.ts');

/** The span of the authorization call on traced requests (telemetry/tracing). */
const EXT_AUTHZ_SPAN = { 'switchboard.policy': 'extAuth' } as const;

function outcomeOf(d: AuthzDecision): 'allowed' | 'denied' | 'error' {
  if (d.allowed) return d.failedOpen ? 'error' : 'allowed';
  return d.reason === 'unavailable' ? 'error' : 'denied';
}

function first(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}

/** Applies an allow: upstream header mutations (in place), downstream headers, `extauthz`. */
function allow(ctx: PolicyContext, d: Extract<AuthzDecision, { allowed: true }>): PolicyResult {
  const mutated = extHeaders().applyMutations(ctx.upstreamHeaders, d.requestHeaders);
  for (const name of Object.keys(ctx.upstreamHeaders)) if (!(name in mutated)) delete ctx.upstreamHeaders[name];
  Object.assign(ctx.upstreamHeaders, mutated);
  if (d.responseHeaders.length > 0) {
    ctx.responseMutations.push((headers) => {
      for (const [name, value] of d.responseHeaders) headers[name] = value;
    });
  }
  if (Object.keys(d.metadata).length > 0) ctx.identity.extauthz = d.metadata;
  return CONTINUE;
}

function deny(d: Extract<AuthzDecision, { allowed: false }>): PolicyResult {
  if (d.reason === 'body_too_large') return respondError(413, 'payload_too_large', d.body);
  const headers: Record<string, string | string[]> = {};
  for (const [name, value] of d.headers) {
    const existing = headers[name];
    headers[name] = existing === undefined ? value : [...(Array.isArray(existing) ? existing : [existing]), value];
  }
  if (d.body === '' && d.reason === 'unavailable') return respondError(d.status, 'ext_auth_unavailable', 'the authorization service is unavailable');
  return respond(d.status, d.body, headers);
}

async function check(client: ExtAuthzClient, ctx: PolicyContext, onDecision: (d: AuthzDecision) => void): Promise<PolicyResult> {
  let body: Buffer | undefined;
  if (client.bodyLimit !== undefined) {
    try {
      body = await ctx.readBody();
    } catch (err) {
      // Past the frontend buffer limit the body is also past maxSize: the same rejection.
      if (err instanceof BodyTooLargeError) return respondError(413, 'payload_too_large', `request body exceeds ${client.bodyLimit} bytes`);
      throw err;
    }
  }
  const activation = activationOf(ctx);
  const input = ctx.cel();
  const url = ctx.query === '' ? ctx.path : `${ctx.path}?${ctx.query}`;
  const decision = await traceCall('ext_authz', EXT_AUTHZ_SPAN, () => client.check({
    method: ctx.method,
    url,
    host: ctx.host,
    scheme: ctx.scheme,
    protocol: input.request?.version ?? 'HTTP/1.1',
    headers: ctx.downstreamHeaders,
    source: { address: ctx.remoteAddress ?? '', port: ctx.remotePort ?? 0 },
    destination: { address: '', port: 0 },
    ...(body ? { body } : {}),
    ...(first(ctx.downstreamHeaders['x-request-id']) ? { id: first(ctx.downstreamHeaders['x-request-id']) } : {}),
  }, activation));
  onDecision(decision);
  return decision.allowed ? allow(ctx, decision) : deny(decision);
}

function compileOne(p: ExtAuthPolicy, deps: StepDeps, onClose: (close: () => void) => void): RunPolicy {
  extHeaders(); // now, at compile time: not by the first request it allows
  const client = authzModule().createExtAuthzClient(p, { resolve: deps.endpoints, connections: deps.connections });
  onClose(() => client.close());
  const logFailure = serviceFailureLog(deps.logger, 'the authorization service', p.backendKey ?? p.url, p.failureMode);
  const onDecision = (d: AuthzDecision): void => {
    countPolicyOutcome('extAuth', outcomeOf(d));
    const cause = d.allowed || d.reason === 'unavailable' ? d.cause : undefined;
    if (cause !== undefined) logFailure(cause);
  };
  return (ctx) => check(client, ctx, onDecision);
}

export const compileExtAuth: StepCompiler<'extAuth'> = (member, deps) =>
  conditionalStep<ExtAuthPolicy>('extAuth', member, (p, _where, onClose) => compileOne(p, deps, onClose));
