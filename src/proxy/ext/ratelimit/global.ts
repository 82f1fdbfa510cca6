/**
 * Global rate limits through an Envoy rate-limit service
 * (`envoy.service.ratelimit.v3.RateLimitService/ShouldRateLimit`).
 *
 * Descriptors come from CEL entries; one whose entry fails is not sent (as Envoy skips a descriptor
 * whose action cannot produce a value). `Requests` descriptors are charged `cost` (default 1) at
 * admission. `Tokens` descriptors are charged after completion with `cost` (default
 * llm.totalTokens) by `recordUsage`; at admission they are probed with one hit, because the service
 * treats a zero hits_addend as one — so an exhausted token budget holds back later requests.
 * A request carries one hits_addend for all its descriptors, so descriptors are grouped by cost.
 */
import { create } from '@bufbuild/protobuf';
import { createClient, type Client } from '@connectrpc/connect';
import { evalNumber, evalString, evalValue } from '../../../cel/index.ts';
import type { Activation, Program } from '../../../cel/index.ts';
import type { GlobalRateLimitPolicy } from '../../../ir/policy.ts';
import { RateLimitDescriptor_RateLimitOverrideSchema, RateLimitDescriptorSchema, type RateLimitDescriptor } from '../gen/envoy/extensions/common/ratelimit/v3/ratelimit_pb.js';
import {
  RateLimitRequestSchema, RateLimitResponse_Code, RateLimitResponse_RateLimit_Unit, RateLimitService,
  type RateLimitResponse, type RateLimitResponse_DescriptorStatus,
} from '../gen/envoy/service/ratelimit/v3/rls_pb.js';
import { RateLimitUnit } from '../gen/envoy/type/v3/ratelimit_unit_pb.js';
import type { SharedConnections } from '../connections.ts';
import { grpcChannel, withUrlFallback, type EndpointResolver, type GrpcChannel } from '../endpoint.ts';
import { grpcCallFailure } from '../call-failure.ts';
import { compileExpression } from '../expressions.ts';
import { headerValueText, type HeaderPair } from '../headers.ts';
import { ALLOWED, overLimit, type RateLimitDecision } from './types.ts';

/** The IR's `rateLimit.global` (src/ir/members.ts): the service endpoint resolved, descriptors as written. */
export type GlobalRateLimitConfig = GlobalRateLimitPolicy;

export interface GlobalRateLimitOptions {
  readonly resolve?: EndpointResolver;
  /** The runtime's shared connections: a client for an endpoint in use reuses its channel. */
  readonly connections?: SharedConnections;
  /** Deadline of one call to the service (default 1000 ms). */
  readonly timeoutMs?: number;
}

interface CompiledDescriptor {
  readonly entries: readonly { readonly name: string; readonly program: Program }[];
  readonly tokens: boolean;
  readonly cost?: Program;
  readonly limitOverride?: Program;
}

const UNITS: Record<string, RateLimitUnit> = {
  second: RateLimitUnit.SECOND, minute: RateLimitUnit.MINUTE, hour: RateLimitUnit.HOUR,
  day: RateLimitUnit.DAY, month: RateLimitUnit.MONTH, year: RateLimitUnit.YEAR,
};
const UNIT_SECONDS: Partial<Record<RateLimitResponse_RateLimit_Unit, number>> = {
  [RateLimitResponse_RateLimit_Unit.SECOND]: 1, [RateLimitResponse_RateLimit_Unit.MINUTE]: 60,
  [RateLimitResponse_RateLimit_Unit.HOUR]: 3600, [RateLimitResponse_RateLimit_Unit.DAY]: 86_400,
};

export class GlobalRateLimitClient {
  readonly #config: GlobalRateLimitConfig;
  readonly #descriptors: readonly CompiledDescriptor[];
  readonly #channel: GrpcChannel;
  readonly #client: Client<typeof RateLimitService>;
  readonly #timeoutMs: number;

  constructor(config: GlobalRateLimitConfig, options: GlobalRateLimitOptions = {}) {
    this.#config = config;
    this.#descriptors = config.descriptors.map((d, i) => ({
      entries: d.entries.map((e) => ({ name: e.name, program: compileExpression(e.expression, `rateLimit.global.descriptors[${i}].${e.name}`) })),
      tokens: d.unit === 'Tokens',
      ...(d.cost ? { cost: compileExpression(d.cost, `rateLimit.global.descriptors[${i}].cost`) } : {}),
      ...(d.limitOverride ? { limitOverride: compileExpression(d.limitOverride, `rateLimit.global.descriptors[${i}].limitOverride`) } : {}),
    }));
    this.#channel = grpcChannel(withUrlFallback(options.resolve)(config), options.connections);
    this.#client = createClient(RateLimitService, this.#channel.transport);
    this.#timeoutMs = options.timeoutMs ?? 1000;
  }

  /** True when some descriptor counts tokens: the pipeline must call recordUsage after the response. */
  get countsTokens(): boolean {
    return this.#descriptors.some((d) => d.tokens);
  }

  /** Admission: Requests descriptors charged their cost, Tokens descriptors probed. */
  async shouldRateLimit(activation: Activation, signal?: AbortSignal): Promise<RateLimitDecision> {
    const groups = this.#group(activation, (d) => (d.tokens ? 1 : d.cost ? costOf(d.cost, activation) : 1));
    try {
      const responses = await Promise.all([...groups].map(([hits, descriptors]) => this.#call(descriptors, hits, signal)));
      return decide(responses);
    } catch (err) {
      const cause = grpcCallFailure(err, this.#timeoutMs);
      return this.#config.failureMode === 'FailOpen'
        ? { allowed: true, headers: [], failedOpen: true, cause }
        : { allowed: false, status: 500, retryAfterS: 0, headers: [], reason: 'unavailable', cause };
    }
  }

  /**
   * After completion: charges Tokens descriptors their cost (default the total token count, from
   * `llm` in the activation). Failures are swallowed — the response has already been sent — and
   * reported as false.
   */
  async recordUsage(activation: Activation, signal?: AbortSignal): Promise<boolean> {
    const groups = this.#group(activation, (d) => (!d.tokens ? undefined : d.cost ? costOf(d.cost, activation) : totalTokens(activation)));
    try {
      await Promise.all([...groups].map(([hits, descriptors]) => this.#call(descriptors, hits, signal)));
      return true;
    } catch {
      return false;
    }
  }

  close(): void {
    this.#channel.close();
  }

  /** Descriptors by hits; `hitsOf` returning undefined or < 1 leaves a descriptor out. */
  #group(activation: Activation, hitsOf: (d: CompiledDescriptor) => number | undefined): Map<number, RateLimitDescriptor[]> {
    const groups = new Map<number, RateLimitDescriptor[]>();
    for (const d of this.#descriptors) {
      const hits = hitsOf(d);
      if (hits === undefined || !(hits >= 1)) continue;
      const descriptor = buildDescriptor(d, activation);
      if (!descriptor) continue;
      const group = groups.get(hits) ?? [];
      group.push(descriptor);
      groups.set(hits, group);
    }
    return groups;
  }

  #call(descriptors: RateLimitDescriptor[], hits: number, signal?: AbortSignal): Promise<RateLimitResponse> {
    const request = create(RateLimitRequestSchema, { domain: this.#config.domain, descriptors, hitsAddend: hits });
    return this.#client.shouldRateLimit(request, { timeoutMs: this.#timeoutMs, signal });
  }
}

function costOf(program: Program, activation: Activation): number | undefined {
  const result = evalNumber(program, activation);
  return result.ok ? Math.round(result.value) : undefined;
}

function totalTokens(activation: Activation): number | undefined {
  const total = activation.llm.totalTokens;
  return typeof total === 'bigint' ? Number(total) : typeof total === 'number' ? total : undefined;
}

function buildDescriptor(d: CompiledDescriptor, activation: Activation): RateLimitDescriptor | undefined {
  const entries: { key: string; value: string }[] = [];
  for (const e of d.entries) {
    const value = evalString(e.program, activation);
    if (!value.ok) return undefined;
    entries.push({ key: e.name, value: value.value });
  }
  const descriptor = create(RateLimitDescriptorSchema, { entries });
  if (d.limitOverride) {
    const override = evalValue(d.limitOverride, activation);
    if (override.ok && override.value !== null && typeof override.value === 'object' && !Array.isArray(override.value)) {
      const { unit, requestsPerUnit } = override.value as { unit?: unknown; requestsPerUnit?: unknown };
      const u = typeof unit === 'string' ? UNITS[unit.toLowerCase().replace(/s$/, '')] : undefined;
      if (u !== undefined && typeof requestsPerUnit === 'number' && requestsPerUnit >= 0) descriptor.limit = create(RateLimitDescriptor_RateLimitOverrideSchema, { unit: u, requestsPerUnit });
    }
  }
  return descriptor;
}

/** Over limit if any response says so; headers from the tightest limit (least remaining). */
function decide(responses: readonly RateLimitResponse[]): RateLimitDecision {
  const statuses = responses.flatMap((r) => r.statuses);
  const extra: HeaderPair[] = responses.flatMap((r) => r.responseHeadersToAdd.map((h): HeaderPair => [h.key.toLowerCase(), headerValueText(h)]));
  const over = responses.some((r) => r.overallCode === RateLimitResponse_Code.OVER_LIMIT);
  const tightest = pickTightest(over ? statuses.filter((s) => s.code === RateLimitResponse_Code.OVER_LIMIT) : statuses);
  const headers = [...rateLimitHeaders(tightest), ...extra];
  if (over) return overLimit(resetSeconds(tightest) ?? 1, headers);
  return headers.length > 0 ? { allowed: true, headers } : ALLOWED;
}

function pickTightest(statuses: readonly RateLimitResponse_DescriptorStatus[]): RateLimitResponse_DescriptorStatus | undefined {
  let best: RateLimitResponse_DescriptorStatus | undefined;
  for (const s of statuses) if (s.currentLimit && (!best || s.limitRemaining < best.limitRemaining)) best = s;
  return best;
}

function resetSeconds(s: RateLimitResponse_DescriptorStatus | undefined): number | undefined {
  const d = s?.durationUntilReset;
  if (d) return Math.max(1, Math.ceil(Number(d.seconds) + d.nanos / 1e9));
  const unit = s?.currentLimit ? UNIT_SECONDS[s.currentLimit.unit] : undefined;
  return unit;
}

function rateLimitHeaders(s: RateLimitResponse_DescriptorStatus | undefined): HeaderPair[] {
  if (!s?.currentLimit) return [];
  const out: HeaderPair[] = [['x-ratelimit-limit', String(s.currentLimit.requestsPerUnit)], ['x-ratelimit-remaining', String(s.limitRemaining)]];
  const reset = resetSeconds(s);
  if (reset !== undefined) out.push(['x-ratelimit-reset', String(reset)]);
  return out;
}
