/** The LLM translation library: what the proxy runtime imports. See README.md beside this file. */
export { planRequest } from './plan.ts';
export type { ClientResponse, ForwardPlan, PlanInput, RequestPlan, UpstreamRequest } from './plan.ts';
export type { StreamTranslator } from './stream/translator.ts';
export type { LLMProvider, PromptCachingConfig, ProviderFormat, ProviderToken, RouteType } from './config.ts';
export { PROVIDER_TOKENS, providerToken } from './config.ts';
export type { CredentialHint, ProviderEndpoint, UpstreamFormat, UpstreamTarget } from './providers/types.ts';
export { PROVIDERS } from './providers/table.ts';
export { errorBody, parseUpstreamError, renderError, TranslationError } from './errors.ts';
export type { ErrorFormat, LLMError } from './errors.ts';
export type { Usage } from './usage.ts';
export { estimateInputTokens } from './tokencount.ts';
export { anthropicModelList, openAIModelList } from './models.ts';
export type { ModelsSource } from './models.ts';
export { defaultContext, deterministicContext } from './context.ts';
export type { TranslationContext } from './context.ts';
