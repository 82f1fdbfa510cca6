import type { Logger } from '../../common/logger.ts';
import type { SharedConnections } from '../ext/connections.ts';
import type { EndpointResolver } from '../ext/endpoint.ts';
import type { TrafficMember, TrafficPolicy } from '../../ir/policy.ts';
import type { PolicyContext } from './context.ts';
import type { PolicyResult } from './result.ts';

/** One compiled traffic member, ready to run per request with no config work. */
export interface TrafficStep {
  readonly member: TrafficMember;
  /** Synchronous steps return the result directly: the chain only awaits real promises. */
  onRequest(ctx: PolicyContext): PolicyResult | Promise<PolicyResult>;
  /**
   * Releases what the step holds (connections to external services, timers). The runtime calls
   * it once the config the step belongs to is replaced and its last request using it has ended.
   */
  close?(): void;
}

/**
 * The life of one compiled config, as the chain sees it: requests through a policy whose steps
 * hold resources are counted in and out, and the steps are closed when the config is retired.
 */
export interface ConfigLifecycle {
  /** A request started using resources of this config. */
  readonly enter: () => void;
  /** That request ended (runs once per `enter`). */
  readonly leave: () => void;
  /** Runs `close` when the config is retired and no request uses it any more. */
  onRetire(close: () => void): void;
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
  /** The runtime's connections to external services, shared across config versions. */
  readonly connections?: SharedConnections;
  /** Present when compiled for a runtime: closes steps' resources after a swap. */
  readonly lifecycle?: ConfigLifecycle;
}

/**
 * Compiles one member of an effective TrafficPolicy. Throwing marks the member invalid: the
 * chain then fails closed (500) for requests it guards, and the error is reported on apply.
 */
export type StepCompiler<M extends TrafficMember> = (member: NonNullable<TrafficPolicy[M]>, deps: StepDeps) => TrafficStep;
