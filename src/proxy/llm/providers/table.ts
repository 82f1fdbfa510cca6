/** The one table from provider token to the module that speaks that vendor's API. */
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

export const PROVIDERS: Readonly<Record<ProviderToken, ProviderModule<never>>> = {
  providerA: openai as ProviderModule<never>,
  providerB: azureOpenAI as ProviderModule<never>,
  providerC: azureAI as ProviderModule<never>,
  providerD: anthropic as ProviderModule<never>,
  providerE: gemini as ProviderModule<never>,
  providerF: vertex as ProviderModule<never>,
  providerG: bedrock as ProviderModule<never>,
  custom: custom as ProviderModule<never>,
};
