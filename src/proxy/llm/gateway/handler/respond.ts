/** Writing an answer to the client: the gateway's own refusals and a provider's buffered answer (guarded when response guards apply). */
import type { DirectResponse } from '../../../policies/result.ts';
import { renderGatewayError } from '../../../http/error-format.ts';
import type { ClientResponse, ForwardPlan } from '../../translate/plan.ts';
import { maskSecrets, type SentSecrets } from '../credential-mask.ts';
import { GUARD_REJECTED, guardJsonBody, type CompiledPromptGuard, type GuardRun } from '../guards/index.ts';
import { account } from './accounting.ts';
import { answerGuards, guardRun } from './guards.ts';
import { withoutLength } from './headers.ts';
import type { Attempt } from './state.ts';

/** Answers from the gateway in the client's format (a gateway error) or as the policy wrote it (an ext_authz denial); returns the status. */
export function refuse(a: Attempt, response: DirectResponse): number {
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
export function sendBuffered(a: Attempt, plan: ForwardPlan, status: number, headers: Record<string, string | string[] | undefined>, raw: Uint8Array, secrets: SentSecrets): number | Promise<number> {
  const r: ClientResponse = plan.translateResponse(status, headers, raw);
  a.span?.body(r.body);
  const guard = r.status < 300 ? answerGuards.get(plan) : undefined;
  if (guard) return sendGuarded(a, plan, r, guard, headers);
  a.sink.send(r.status, r.headers, r.status >= 400 ? maskSecrets(r.body, secrets) : r.body);
  account(a, r.usage, plan);
  return r.status;
}

async function sendGuarded(a: Attempt, plan: ForwardPlan, r: ClientResponse, guard: CompiledPromptGuard, headers: GuardRun['headers']): Promise<number> {
  account(a, r.usage, plan);
  const checking = guardJsonBody(guard.response, a.route, r.body, guardRun(a, 'response', headers, false));
  const checked = checking instanceof Promise ? await checking : checking;
  if (checked.kind === 'reject') {
    a.gw.logger.info({ backend: a.gw.ir.key, provider: a.provider.name, route: a.route, guard: checked.guard, failed: checked.failed }, 'prompt guard rejected an answer');
    return refuse(a, { status: checked.status, error: { code: GUARD_REJECTED, message: checked.message } });
  }
  a.sink.send(r.status, checked.body === r.body ? r.headers : withoutLength(r.headers), checked.body);
  return r.status;
}
