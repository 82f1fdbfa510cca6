/**
 * providerC: Azure AI resources. ResourceTypeA is an Azure OpenAI resource; ResourceTypeB is an
 * AI Foundry resource with project-scoped OpenAI paths, where Claude models speak Messages.
 */
import type { AzureAIConfig, LLMProvider } from '../config.ts';
import { azureOpenAIEndpoint, API_KEY } from './azure-openai.ts';
import { joinPath, managedTarget, OPENAI_SUFFIX } from './paths.ts';
import type { ProviderModule } from './types.ts';

const ANTHROPIC_VERSION = '2023-06-01';

export const azureAI: ProviderModule<AzureAIConfig> = {
  token: 'providerC',
  config: (p) => (p as Extract<LLMProvider, { providerC: unknown }>).providerC,
  target(p, c) {
    const suffix = c.resourceType === 'ResourceTypeA' ? 'openai.azure.com' : 'services.ai.azure.com';
    return managedTarget(`${c.resourceName}.${suffix}`, p);
  },
  endpoint(p, c, q) {
    const apiVersion = c.apiVersion ?? 'v1';
    if (c.resourceType === 'ResourceTypeA') return azureOpenAIEndpoint(p, apiVersion, undefined, q);
    if (q.model.startsWith('claude')) {
      // Foundry serves Anthropic models on the Messages API.
      if (q.route === 'Completions' || q.route === 'Messages' || q.route === 'Responses') {
        return { format: 'messages', path: p.path ?? '/anthropic/v1/messages', headers: { 'anthropic-version': ANTHROPIC_VERSION }, credential: { kind: 'header', name: 'x-api-key' } };
      }
      if (q.route === 'TokenCount') {
        return { format: 'count_tokens', path: '/anthropic/v1/messages/count_tokens', headers: { 'anthropic-version': ANTHROPIC_VERSION }, credential: { kind: 'header', name: 'x-api-key' } };
      }
      return undefined;
    }
    const route = OPENAI_SUFFIX[q.route];
    if (!route) return undefined;
    // Realtime is served at the resource level, not under a project.
    if (route.format === 'realtime') return azureOpenAIEndpoint(p, apiVersion, undefined, q);
    const base = joinPath(`/api/projects/${encodeURIComponent(c.projectName ?? '')}/openai/v1`, route.suffix);
    const path = apiVersion === 'v1' ? base : `${base}?api-version=${encodeURIComponent(apiVersion)}`;
    return { format: route.format, path: p.path && route.format !== 'embeddings' ? p.path : path, headers: {}, credential: API_KEY };
  },
};
