/**
 * The LLM provider configuration as SPEC.md states it (`AIBackend.provider`, `LLMProvider`). The
 * shapes live in the IR (src/ir/ai.ts), which is what the translator hands the runtime.
 */
import type { LLMProvider } from '../../../ir/ai.ts';

export type {
  AnthropicConfig, AzureAIConfig, AzureOpenAIConfig, BedrockConfig, CustomConfig, GeminiConfig, LLMProvider,
  OpenAIConfig, PromptCachingConfig, ProviderCommon, ProviderFormat, RouteType, VertexConfig,
} from '../../../ir/ai.ts';

export const PROVIDER_TOKENS = ['providerA', 'providerB', 'providerC', 'providerD', 'providerE', 'providerF', 'providerG', 'custom'] as const;
export type ProviderToken = (typeof PROVIDER_TOKENS)[number];

/** The token of a provider config (its one-of member). */
export function providerToken(p: LLMProvider): ProviderToken {
  for (const t of PROVIDER_TOKENS) if (t in p) return t;
  throw new Error('LLMProvider has no provider member');
}
