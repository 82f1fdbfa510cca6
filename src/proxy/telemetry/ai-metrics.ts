/**
 * GenAI, MCP and policy-outcome metrics (OpenTelemetry GenAI metric conventions, Prometheus names:
 * `gen_ai.client.token.usage` → `gen_ai_client_token_usage`, dots → underscores, seconds suffixed).
 *
 * The metrics are process-wide (one set per process, each cluster worker has its own and the
 * primary aggregates them) and are added to a runtime's registry by registerAiMetrics, so the LLM
 * and MCP handlers and the policies record without being handed a registry.
 *
 * Cardinality: `backend`, `provider`, `target`, `policy` come from the config or from constants in
 * the code; `gen_ai_request_model` and `gen_ai_tool_name` come from requests and are capped
 * (BoundedLabel: the first 256 models and 1024 tool names of the process, later new ones are `other`).
 */
import { Counter, Histogram, type Metric, type Registry } from 'prom-client';
import type { LLMProvider, RouteType } from '../../ir/ai.ts';
import { BoundedLabel } from './bounded-label.ts';
import { OPERATIONS, providerName, type TokenUsage } from './tracing/genai.ts';

/** The semconv's advised buckets. */
const TOKEN_BUCKETS = [1, 4, 16, 64, 256, 1024, 4096, 16384, 65536, 262144, 1048576, 4194304, 16777216, 67108864];
const DURATION_BUCKETS = [0.01, 0.02, 0.04, 0.08, 0.16, 0.32, 0.64, 1.28, 2.56, 5.12, 10.24, 20.48, 40.96, 81.92];
const TTFT_BUCKETS = [0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.25, 0.5, 0.75, 1, 2.5, 5, 7.5, 10];

export const MAX_MODEL_LABELS = 256;
export const MAX_TOOL_LABELS = 1024;

const LLM_LABELS = ['gen_ai_operation_name', 'gen_ai_provider_name', 'gen_ai_request_model', 'backend', 'provider'] as const;
type LlmLabel = (typeof LLM_LABELS)[number];

const tokenUsage = new Histogram<LlmLabel | 'gen_ai_token_type'>({
  name: 'gen_ai_client_token_usage',
  help: 'Tokens used per LLM provider call, by token type (input includes cached reads; output).',
  labelNames: [...LLM_LABELS, 'gen_ai_token_type'],
  buckets: TOKEN_BUCKETS,
  registers: [],
});
const operationDuration = new Histogram<LlmLabel | 'error_type'>({
  name: 'gen_ai_client_operation_duration_seconds',
  help: 'Duration of an LLM provider call, from sending the request to the end of the answer; error_type is empty on success.',
  labelNames: [...LLM_LABELS, 'error_type'],
  buckets: DURATION_BUCKETS,
  registers: [],
});
const timeToFirstToken = new Histogram<LlmLabel>({
  name: 'gen_ai_server_time_to_first_token_seconds',
  help: 'Time from sending a streamed LLM request to the first translated chunk written to the client.',
  labelNames: [...LLM_LABELS],
  buckets: TTFT_BUCKETS,
  registers: [],
});
const mcpCalls = new Counter<'backend' | 'target' | 'mcp_method_name' | 'gen_ai_tool_name' | 'outcome'>({
  name: 'switchboard_mcp_calls_total',
  help: 'MCP requests forwarded to a target, by method, tool (tools/call only) and outcome (ok, error).',
  labelNames: ['backend', 'target', 'mcp_method_name', 'gen_ai_tool_name', 'outcome'],
  registers: [],
});
const policyOutcomes = new Counter<'policy' | 'outcome'>({
  name: 'switchboard_policy_outcomes_total',
  help: 'Decisions of policies (rate limits, guards): policy and outcome are names from the code.',
  labelNames: ['policy', 'outcome'],
  registers: [],
});

/** Each metric with its name (prom-client's types do not expose `name`). */
const ALL: readonly (readonly [string, Metric])[] = [
  ['gen_ai_client_token_usage', tokenUsage],
  ['gen_ai_client_operation_duration_seconds', operationDuration],
  ['gen_ai_server_time_to_first_token_seconds', timeToFirstToken],
  ['switchboard_mcp_calls_total', mcpCalls],
  ['switchboard_policy_outcomes_total', policyOutcomes],
];
const models = new BoundedLabel(MAX_MODEL_LABELS);
const tools = new BoundedLabel(MAX_TOOL_LABELS);

/** Adds the process's GenAI, MCP and policy-outcome metrics to `registry` (once per registry). */
export function registerAiMetrics(registry: Registry): void {
  for (const [name, metric] of ALL) if (registry.getSingleMetric(name) === undefined) registry.registerMetric(metric);
}

/**
 * Counts one policy decision, e.g. countPolicyOutcome('rateLimit', 'limited') or
 * countPolicyOutcome('promptGuard', 'rejected'). Both arguments must be constants of the caller
 * (never request data): they are label values.
 */
export function countPolicyOutcome(policy: string, outcome: string): void {
  policyOutcomes.inc({ policy, outcome });
}

/** Counts one MCP request sent to `target`; `tool` only for tools/call. */
export function countMcpCall(backend: string, target: string, method: string, tool: string | undefined, ok: boolean): void {
  mcpCalls.inc({ backend, target, mcp_method_name: method, gen_ai_tool_name: tool === undefined ? '' : tools.value(tool), outcome: ok ? 'ok' : 'error' });
}

/**
 * One LLM provider attempt, made for every attempt (traced or not): the request's model comes
 * with the plan, the first streamed chunk times the first token, usage and the end are recorded.
 */
export class LlmCallMeter {
  readonly #labels: Record<LlmLabel, string>;
  #started = performance.now();
  #firstChunk = false;

  constructor(backend: string, provider: { readonly name: string; readonly provider: LLMProvider }, route: RouteType) {
    this.#labels = { gen_ai_operation_name: OPERATIONS[route], gen_ai_provider_name: providerName(provider.provider), gen_ai_request_model: '', backend, provider: provider.name };
  }

  /** The planned request is about to be sent. */
  request(model: string): void {
    this.#labels.gen_ai_request_model = models.value(model);
    this.#started = performance.now();
  }

  /** A translated chunk is on its way to the client; the first one is the time to first token. */
  chunk(): void {
    if (this.#firstChunk) return;
    this.#firstChunk = true;
    timeToFirstToken.observe(this.#labels, (performance.now() - this.#started) / 1000);
  }

  usage(usage: TokenUsage): void {
    tokenUsage.observe({ ...this.#labels, gen_ai_token_type: 'input' }, usage.inputTokens);
    tokenUsage.observe({ ...this.#labels, gen_ai_token_type: 'output' }, usage.outputTokens);
  }

  /** The attempt ended: a status of 400 or more, or an error, is the error_type. */
  end(outcome: { status?: number; error?: unknown }): void {
    const errorType = outcome.error !== undefined ? (outcome.error instanceof Error ? outcome.error.name : 'error') : outcome.status !== undefined && outcome.status >= 400 ? String(outcome.status) : '';
    operationDuration.observe({ ...this.#labels, error_type: errorType }, (performance.now() - this.#started) / 1000);
  }
}
