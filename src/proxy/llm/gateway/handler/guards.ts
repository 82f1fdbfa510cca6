/**
 * The handler's prompt-guard hooks (guards/): request guards once per body and guard list, the
 * guards that judge a plan's answer, stream guards and the abort/failure wiring of a guard run.
 */
import type { AiPolicy } from '../../../../ir/ai.ts';
import type { ForwardPlan } from '../../translate/plan.ts';
import { AiPolicyError } from '../body-policy.ts';
import { GuardConfigError, guardJsonBody, promptGuardOf, StreamGuard, type BodyGuardOutcome, type CompiledPromptGuard, type GuardRun, type StreamVerdict } from '../guards/index.ts';
import type { Attempt } from './state.ts';

/** Request guards' outcome per body and guard list, so a failover under the same guards does not judge (or call a guard service) again. */
const guardedBodies = new WeakMap<Uint8Array, Map<CompiledPromptGuard, BodyGuardOutcome>>();
/** The prompt guards whose response guards judge a plan's answer (set only for plans that have some). */
export const answerGuards = new WeakMap<ForwardPlan, CompiledPromptGuard>();

/** The policy's compiled prompt guards; a guard that cannot be compiled fails the request closed (500, logged once per request). */
export function guardsOf(ai: AiPolicy | undefined): CompiledPromptGuard | undefined {
  try {
    return promptGuardOf(ai);
  } catch (err) {
    if (err instanceof GuardConfigError) throw new AiPolicyError(err.message, 500);
    throw err;
  }
}

/** The request guards' outcome for this body (once per body and guard list, failover included). */
export async function guardRequest(a: Attempt, guard: CompiledPromptGuard, body: Uint8Array): Promise<BodyGuardOutcome> {
  let known = guardedBodies.get(body);
  const seen = known?.get(guard);
  if (seen) return seen;
  const checking = guardJsonBody(guard.request, a.route, body, guardRun(a, 'request', a.req.headers, false));
  const checked = checking instanceof Promise ? await checking : checking;
  if (!known) guardedBodies.set(body, (known = new Map()));
  known.set(guard, checked);
  return checked;
}

export function streamGuardFor(a: Attempt, plan: ForwardPlan, headers: GuardRun['headers']): StreamGuard | undefined {
  const guard = answerGuards.get(plan);
  if (!guard?.streaming) return undefined;
  const { signal, onFailure } = guardRun(a, 'response', headers, true);
  return new StreamGuard(guard.response, a.route, { headers, signal, ...(onFailure ? { onFailure } : {}) });
}

/** The bytes to write now, or undefined when the guards rejected them: the error event was written in their place. */
export async function streamPasses(a: Attempt, checking: StreamVerdict | Promise<StreamVerdict>): Promise<Uint8Array | undefined> {
  const verdict = checking instanceof Promise ? await checking : checking;
  if (verdict.kind === 'write') return verdict.bytes;
  a.gw.logger.info({ backend: a.gw.ir.key, provider: a.provider.name, route: a.route }, 'prompt guard rejected a streamed answer');
  await a.sink.write(verdict.rejection);
  return undefined;
}

export function guardRun(a: Attempt, phase: GuardRun['phase'], headers: GuardRun['headers'], streaming: boolean): GuardRun {
  const abort = new AbortController();
  // Guard services stop waiting when the client leaves.
  if (a.sink.closed) abort.abort();
  else a.sink.onAbort(() => abort.abort());
  return {
    phase, headers, streaming, signal: abort.signal,
    onFailure: (g, err) => a.gw.logger.warn({ backend: a.gw.ir.key, provider: a.provider.name, guard: g.kind, phase, failOpen: g.failOpen, err: String(err) }, 'prompt guard failed'),
  };
}
