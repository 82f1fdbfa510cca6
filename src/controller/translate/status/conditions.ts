import type { Condition } from '../../../api/gateway/object.ts';

/** A failed check, ready to become a condition: the Gateway API reason and a message naming the field. */
export interface Problem {
  readonly reason: string;
  readonly message: string;
}

/** One condition with the object's generation; lastTransitionTime is left to the status writer. */
export function condition(type: string, ok: boolean, reason: string, message: string, observedGeneration: number | undefined): Condition {
  const out: Condition = { type, status: ok ? 'True' : 'False', reason, message };
  if (observedGeneration !== undefined) out.observedGeneration = observedGeneration;
  return out;
}

/** True with `okReason` when there are no problems; otherwise False with the first problem's reason and every message. */
export function conditionFrom(type: string, problems: readonly Problem[], okReason: string, okMessage: string, observedGeneration: number | undefined): Condition {
  if (problems.length === 0) return condition(type, true, okReason, okMessage, observedGeneration);
  return condition(type, false, problems[0].reason, problems.map((p) => p.message).join('; '), observedGeneration);
}
