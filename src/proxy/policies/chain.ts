import type { InvalidPolicy, TrafficMember, TrafficPolicy } from '../../ir/policy.ts';
import type { PolicyContext } from './context.ts';
import { STEP_COMPILERS, TRAFFIC_ORDER } from './registry.ts';
import { CONTINUE, respondError, type PolicyResult } from './result.ts';
import type { ConfigLifecycle, StepDeps, TrafficStep } from './step.ts';

/** An effective TrafficPolicy compiled once per config: the steps to run, in order. */
export interface CompiledTrafficPolicy {
  readonly steps: readonly TrafficStep[];
  /** Invalid policies apply here: every request is answered 500 and never forwarded. */
  readonly invalid: readonly InvalidPolicy[];
  /** `timeouts.request` from a policy; the Exchange prefers it over the route's own. */
  readonly requestTimeoutMs: number | undefined;
  /** Set when a step holds resources: requests are counted so the config retires after the last one. */
  readonly lifecycle: ConfigLifecycle | undefined;
}

/** Members the Exchange applies itself rather than a request step. */
const EXCHANGE_MEMBERS: ReadonlySet<TrafficMember> = new Set(['timeouts']);

export function compileTrafficPolicy(policy: TrafficPolicy, deps: Omit<StepDeps, 'policy'>, onError: (message: string) => void): CompiledTrafficPolicy {
  const invalid: InvalidPolicy[] = [...(policy.invalid ?? [])];
  const steps: TrafficStep[] = [];
  const stepDeps: StepDeps = { ...deps, policy };
  for (const member of TRAFFIC_ORDER) {
    const ir = policy[member];
    if (ir === undefined || EXCHANGE_MEMBERS.has(member)) continue;
    const source = policy.sources[member]?.join(', ') ?? 'ProxyPolicy';
    const compiler = STEP_COMPILERS[member];
    if (!compiler) {
      // Never ignore a member we cannot enforce: a policy that silently does nothing is worse than a 500.
      const message = `traffic.${member} is not supported by this proxy yet`;
      invalid.push({ source, message });
      onError(`${source}: ${message}`);
      continue;
    }
    try {
      steps.push((compiler as (m: unknown, d: StepDeps) => TrafficStep)(ir, stepDeps));
    } catch (err) {
      const message = `traffic.${member}: ${(err as Error).message}`;
      invalid.push({ source, message });
      onError(`${source}: ${message}`);
    }
  }
  const requestTimeoutMs = policy.timeouts?.requestMs;
  const closing = steps.filter((s) => s.close !== undefined);
  // Compiled outside a runtime (tests, tools) there is no lifecycle: clients close on their own when idle.
  const lifecycle = closing.length > 0 ? deps.lifecycle : undefined;
  lifecycle?.onRetire(() => closeSteps(closing, deps));
  // One object shape for every policy (the chain runs per request).
  return { steps, invalid, requestTimeoutMs: requestTimeoutMs !== undefined && requestTimeoutMs > 0 ? requestTimeoutMs : undefined, lifecycle };
}

function closeSteps(steps: readonly TrafficStep[], deps: Pick<StepDeps, 'logger'>): void {
  for (const step of steps) {
    try {
      step.close?.();
    } catch (err) {
      deps.logger.warn({ err, member: step.member }, 'closing a traffic policy step failed');
    }
  }
}

const FAIL_CLOSED = respondError(500, 'policy_invalid', 'a policy that applies to this route is invalid');

/**
 * Runs the steps in order until one answers. Synchronous steps cost no promise; the first
 * asynchronous step switches to an awaited loop for the rest.
 */
export function runTrafficPolicy(policy: CompiledTrafficPolicy, ctx: PolicyContext): PolicyResult | Promise<PolicyResult> {
  if (policy.invalid.length > 0) return FAIL_CLOSED;
  const lifecycle = policy.lifecycle;
  if (lifecycle !== undefined) {
    // Only policies holding resources pay for this: the config retires after its last such request.
    lifecycle.enter();
    ctx.onEnd(lifecycle.leave);
  }
  const steps = policy.steps;
  for (let i = 0; i < steps.length; i++) {
    const result = steps[i].onRequest(ctx);
    if (result instanceof Promise) return continueAsync(steps, i, result, ctx);
    if (result.action === 'respond') return result;
  }
  return CONTINUE;
}

async function continueAsync(steps: readonly TrafficStep[], index: number, pending: Promise<PolicyResult>, ctx: PolicyContext): Promise<PolicyResult> {
  let result = await pending;
  if (result.action === 'respond') return result;
  for (let i = index + 1; i < steps.length; i++) {
    result = await steps[i].onRequest(ctx);
    if (result.action === 'respond') return result;
  }
  return CONTINUE;
}
