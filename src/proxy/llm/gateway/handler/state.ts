/**
 * What the pieces of the LLM handler share: the backend's long-lived state (one per handler) and
 * one provider attempt as the failover loop, the guards and the response writers see it.
 */
import type { Logger } from '../../../../common/logger.ts';
import type { AiBackendIR, AiPolicy, AiProviderIR, RouteType } from '../../../../ir/ai.ts';
import type { BackendPolicy } from '../../../../ir/policy.ts';
import type { HandlerRequest } from '../../../backends/handlers.ts';
import { formatOfRouteType } from '../../../backends/client-format.ts';
import type { DownstreamRequest } from '../../../http/downstream.ts';
import type { CompiledBackendPolicy } from '../../../policies/backend/compile.ts';
import { subBackendPolicy } from '../../../policies/backend/sub-backend.ts';
import type { LlmAttemptSpan } from '../../../telemetry/tracing/genai.ts';
import type { LlmCallMeter } from '../../../telemetry/ai-metrics.ts';
import type { ErrorFormat } from '../../translate/errors.ts';
import type { PolicyGate } from '../backend-policy.ts';
import type { ClientSink } from '../client-io.ts';
import type { LlmCredentials } from '../credentials/index.ts';
import type { ProviderSchedule } from '../failover.ts';
import type { HeadWait, ProviderHealth } from '../provider-health.ts';
import type { ProviderPools, ReplicaTurns } from '../upstream.ts';

/** The backend's state every request uses (made once per handler). */
export interface GatewayState {
  readonly ir: AiBackendIR;
  readonly logger: Logger;
  /** Scores, latency, evictions of the providers (provider-health.ts); fed by every attempt. */
  readonly health: ProviderHealth;
  readonly pools: ProviderPools;
  readonly replicas: ReplicaTurns;
  readonly credentials: LlmCredentials;
  /** Cap on a buffered provider answer. */
  readonly maxResponseBytes: number;
}

/** A failed attempt kept for the last one; `answer` sends it and resolves with the status the client got. */
export interface Retryable { readonly kind: 'retryable'; readonly status: number; readonly answer: () => Promise<number> }
export type Outcome = { readonly kind: 'answered'; readonly status: number } | Retryable;

/** Routes whose body is not JSON for the gateway: forwarded or ignored as they are. */
export const OPAQUE_BODY_ROUTES = new Set<RouteType>(['Passthrough', 'Realtime', 'Models']);

/** One attempt as provider health follows it; a HeadWait while it waits for the head with another provider to go to. */
export interface Tracked extends HeadWait {
  readonly index: number;
  started: number;
  readonly spec: BackendPolicy['health'];
}

export interface Attempt {
  readonly gw: GatewayState;
  readonly req: DownstreamRequest;
  readonly request: HandlerRequest;
  readonly sink: ClientSink;
  readonly route: RouteType;
  readonly body: Buffer;
  readonly provider: AiProviderIR;
  readonly format: ErrorFormat;
  /** The backend policies already run for this request (failover to a provider under the same one does not rerun them). */
  readonly ran: Map<CompiledBackendPolicy, PolicyGate>;
  /** Failover and retry (failover.ts): which answers are held back for another attempt. */
  readonly schedule: ProviderSchedule;
  /** Present when the request is traced. */
  readonly span: LlmAttemptSpan | undefined;
  readonly meter: LlmCallMeter;
}

export function aiOf(policy: BackendPolicy | undefined): AiPolicy | undefined {
  return policy?.ai;
}

/**
 * The provider's effective backend policy: the translator wrote each provider's complete policy
 * (policy objects < backend inline < sectionName < the provider's own `policies`) into the route
 * policy's `subBackends`, so this only looks it up (policies/backend/sub-backend.ts).
 */
export function effectivePolicy(backend: BackendPolicy | undefined, provider: AiProviderIR): BackendPolicy | undefined {
  return subBackendPolicy(backend, provider.name, provider.policies);
}

/** The same rule the pipeline renders its own errors by (backends/client-format.ts), so both agree. */
export const errorFormatOf: (route: RouteType, anthropicVersion: unknown) => ErrorFormat = formatOfRouteType;
