import type { LlmInput } from '../../../cel/index.ts';

/**
 * The `llm` CEL variable (docs/cel.md) as far as a phase can see it. Before the provider is
 * planned, the client's body says which model it asked for and whether it streams; once planned,
 * the plan's model (after aliases) and stream flag are the facts; the answer adds the response
 * model and the token counts. Each phase passes what it knows; absent facts stay unset (an
 * expression reading them fails and is handled as its member says).
 */
export interface LlmFacts {
  readonly provider: string;
  readonly requestModel?: string | undefined;
  readonly streaming?: boolean | undefined;
  readonly responseModel?: string | undefined;
  readonly usage?: { readonly inputTokens: number; readonly outputTokens: number; readonly totalTokens: number } | undefined;
}

export function llmInput(facts: LlmFacts): LlmInput {
  const out: LlmInput = { provider: facts.provider };
  if (facts.requestModel !== undefined) out.requestModel = facts.requestModel;
  if (facts.streaming !== undefined) out.streaming = facts.streaming;
  if (facts.responseModel !== undefined) out.responseModel = facts.responseModel;
  if (facts.usage) {
    out.inputTokens = facts.usage.inputTokens;
    out.outputTokens = facts.usage.outputTokens;
    out.totalTokens = facts.usage.totalTokens;
  }
  return out;
}

/** What a client's JSON body says: `model` (OpenAI, Anthropic, Responses) and `stream` (absent means not streaming). */
export function clientBodyFacts(body: Readonly<Record<string, unknown>>): { requestModel: string | undefined; streaming: boolean } {
  return { requestModel: typeof body.model === 'string' ? body.model : undefined, streaming: body.stream === true };
}
