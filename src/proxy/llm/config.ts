/**
 * The LLM provider configuration as SPEC.md states it (`AIBackend.provider`, `LLMProvider`).
 * The IR does not carry AI backends yet; the translator will hand the runtime this shape, and
 * this library reads nothing else.
 */

export type RouteType =
  | 'Completions' | 'Messages' | 'Models' | 'Passthrough' | 'Responses' | 'TokenCount' | 'Embeddings' | 'Realtime';

export type ProviderFormat = 'Completions' | 'Messages' | 'Responses' | 'Embeddings' | 'TokenCount' | 'Realtime' | 'Rerank';

export interface ProviderCommon {
  readonly host?: string;
  readonly port?: number;
  readonly path?: string;
  /** Only honoured for providerA and providerD (SPEC.md). */
  readonly pathPrefix?: string;
}

export interface OpenAIConfig { readonly model?: string }
export interface AzureOpenAIConfig { readonly endpoint: string; readonly deploymentName?: string; readonly apiVersion?: string }
export interface AzureAIConfig {
  readonly resourceName: string;
  readonly resourceType: 'ResourceTypeA' | 'ResourceTypeB';
  readonly apiVersion?: string;
  readonly projectName?: string;
  readonly model?: string;
}
export interface AnthropicConfig { readonly model?: string }
export interface GeminiConfig { readonly model?: string }
export interface VertexConfig { readonly model?: string; readonly projectId: string; readonly region: string }
export interface BedrockConfig {
  readonly region?: string;
  readonly guardrail?: { readonly identifier: string; readonly version: string };
  readonly model?: string;
}
export interface CustomConfig {
  /** The resolved Service/InferencePool target, when the provider names one (the runtime resolves it). */
  readonly backendRef?: { readonly name: string; readonly port?: number };
  readonly formats: readonly { readonly type: ProviderFormat; readonly path?: string }[];
  readonly model?: string;
}

/** One-of the provider members, plus the common members. */
export type LLMProvider = ProviderCommon & (
  | { readonly providerA: OpenAIConfig }
  | { readonly providerB: AzureOpenAIConfig }
  | { readonly providerC: AzureAIConfig }
  | { readonly providerD: AnthropicConfig }
  | { readonly providerE: GeminiConfig }
  | { readonly providerF: VertexConfig }
  | { readonly providerG: BedrockConfig }
  | { readonly custom: CustomConfig }
);

export const PROVIDER_TOKENS = ['providerA', 'providerB', 'providerC', 'providerD', 'providerE', 'providerF', 'providerG', 'custom'] as const;
export type ProviderToken = (typeof PROVIDER_TOKENS)[number];

/** The token of a provider config (its one-of member). */
export function providerToken(p: LLMProvider): ProviderToken {
  for (const t of PROVIDER_TOKENS) if (t in p) return t;
  throw new Error('LLMProvider has no provider member');
}

/** `ai.promptCaching` (SPEC.md PromptCachingConfig): Bedrock cache points, for model families that support them. */
export interface PromptCachingConfig {
  readonly cacheSystem?: boolean;
  readonly cacheMessages?: boolean;
  readonly cacheTools?: boolean;
  readonly minTokens?: number;
  readonly cacheMessageOffset?: number;
}
