/**
 * How a provisioned proxy shuts down on SIGTERM, from ProxyParameters `shutdown` (carried as
 * CONNECTION_MIN_TERMINATION_DEADLINE and TERMINATION_GRACE_PERIOD_SECONDS; the pod's
 * terminationGracePeriodSeconds is the same max):
 *
 * 1. readiness fails at once, and the listeners keep accepting for `min` seconds, so load
 *    balancers and Service endpoints stop sending before the port closes;
 * 2. then the listeners stop accepting and in-flight requests drain for what is left of `max`,
 *    less a one-second margin so the process exits before the kubelet's SIGKILL;
 * 3. exit.
 *
 * Without the variables (or with unusable values): no wait, a 10 s drain (the earlier default).
 */
export const DEFAULT_DRAIN_GRACE_MS = 10_000;
const KILL_MARGIN_MS = 1_000;
/** SPEC.md bounds both at 31536000 s. */
const MAX_SECONDS = 31_536_000;

export interface ShutdownPlan {
  /** Keep accepting (not ready) this long after the signal. */
  readonly acceptForMs: number;
  /** Then drain in-flight requests for at most this long. */
  readonly drainMs: number;
}

export function shutdownPlan(env: NodeJS.ProcessEnv): ShutdownPlan {
  const min = seconds(env.CONNECTION_MIN_TERMINATION_DEADLINE);
  const max = seconds(env.TERMINATION_GRACE_PERIOD_SECONDS);
  if (max === undefined) return { acceptForMs: min !== undefined ? min * 1000 : 0, drainMs: DEFAULT_DRAIN_GRACE_MS };
  const budget = Math.max(0, max * 1000 - KILL_MARGIN_MS);
  const acceptForMs = Math.min(min !== undefined ? min * 1000 : 0, budget);
  return { acceptForMs, drainMs: budget - acceptForMs };
}

function seconds(value: string | undefined): number | undefined {
  if (value === undefined || !/^\d+$/.test(value.trim())) return undefined;
  const n = Number(value.trim());
  return n <= MAX_SECONDS ? n : undefined;
}
