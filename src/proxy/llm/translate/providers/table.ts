/**
 * The one table from provider token to the module that speaks that vendor's API. Module methods
 * are declared as methods (bivariant), so each typed module fits `ProviderModule<unknown>`.
 */
import type { ProviderToken } from '../config.ts';
import { anthropic } from './anthropic.ts';
import { azureAI } from './azure-ai.ts';
import { azureOpenAI } from './azure-openai.ts';
import { bedrock } from './bedrock.ts';
import { custom } from './custom.ts';
import { gemini } from './gemini.ts';
import { openai } from './openai.ts';
import type { ProviderModule } from './types.ts';
import { vertex } from './vertex.ts';

export const PROVIDERS: Readonly<Record<ProviderToken, ProviderModule<unknown>>> = {
  providerA: openai,
  providerB: azureOpenAI,
  providerC: azureAI,
  providerD: anthropic,
  providerE: gemini,
  providerF: vertex,
  providerG: bedrock,
  custom: custom,
};
