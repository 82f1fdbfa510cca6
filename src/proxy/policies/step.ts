import type { Logger } from '../../common/logger.ts';
import type { EndpointResolver } from '../ext/endpoint.ts';
import type { TrafficMember, TrafficPolicy } from '../../ir/policy.ts';
import type { PolicyContext } from './context.ts';
import type { PolicyResult } from './result.ts';

/** One compiled traffic member, ready to run per request with no config work. */
export interface TrafficStep {
  readonly member: TrafficMember;
  /** Synchronous steps return the result directly: the chain only awaits real promises. */
  onRequest(ctx: PolicyContext): PolicyResult | Promise<PolicyResult>;
}

/** What compiling a step may need beyond its own IR member. */
export interface StepDeps {
  readonly logger: Logger;
  /** The whole effective policy, for members that read a sibling (e.g. basic auth realm). */
  readonly policy: TrafficPolicy;
  /**
   * Turns a policy endpoint (`backendKey` into the config's backends, or a `url`) into an address,
   * for members that call a service (remote JWKS). Absent: only `url` endpoints can be used.
   */
  readonly endpoints?: EndpointResolver;
}

/**
 * Compiles one member of an effective TrafficPolicy. Throwing marks the member invalid: the
 * chain then fails closed (500) for requests it guards, and the error is reported on apply.
 */
export type StepCompiler<M extends TrafficMember> = (member: NonNullable<TrafficPolicy[M]>, deps: StepDeps) => TrafficStep;
