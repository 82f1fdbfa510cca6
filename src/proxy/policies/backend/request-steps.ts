/**
 * The request-side steps of a compiled backend policy, shared by every kind of upstream call
 * (Service forwards, AI provider calls): backend extAuth, then backend transformation. Both act
 * on the request's policy context: header mutations land in `ctx.upstreamHeaders`, an answer
 * (denial, unavailable service under FailClosed, transformation answer) comes back as `respond`.
 */
import { runTrafficPolicy } from '../chain.ts';
import type { PolicyContext } from '../context.ts';
import { CONTINUE, type PolicyResult } from '../result.ts';
import type { CompiledBackendPolicy } from './compile.ts';

type Steps = Pick<CompiledBackendPolicy, 'extAuth' | 'transformation'>;

/** Whether `runtime` has request steps to run (a policy context is then needed). */
export function hasRequestSteps(runtime: Steps): boolean {
  return runtime.extAuth !== undefined || runtime.transformation !== undefined;
}

/** Runs extAuth, then the transformation; synchronous when both are (no promise for plain policies). */
export function runRequestSteps(runtime: Steps, ctx: PolicyContext): PolicyResult | Promise<PolicyResult> {
  const transform = runtime.transformation;
  if (!runtime.extAuth) return transform ? transform(ctx) : CONTINUE;
  const checked = runTrafficPolicy(runtime.extAuth, ctx);
  const next = (result: PolicyResult): PolicyResult | Promise<PolicyResult> => (result.action === 'respond' || !transform ? result : transform(ctx));
  return checked instanceof Promise ? checked.then(next) : next(checked);
}
