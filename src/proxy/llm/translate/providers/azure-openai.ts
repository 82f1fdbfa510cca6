/**
 * providerB: Azure OpenAI. apiVersion `v1` uses the unversioned `/openai/v1/…` surface (model in
 * the body); other versions address a deployment and pass `api-version` as a query parameter.
 */
import type { AzureOpenAIConfig, LLMProvider } from '../config.ts';
import { joinPath, managedTarget, modelSegment, OPENAI_SUFFIX, stripScheme } from './paths.ts';
import type { EndpointQuery, ProviderEndpoint, ProviderModule } from './types.ts';

export const API_KEY = { kind: 'header', name: 'api-key' } as const;

/** The Azure OpenAI path layout, shared with providerC's ResourceTypeA. */
export function azureOpenAIEndpoint(p: LLMProvider, apiVersion: string, deployment: string | undefined, q: EndpointQuery): ProviderEndpoint | undefined {
  const route = OPENAI_SUFFIX[q.route];
  if (!route) return undefined;
  let path: string;
  if (route.format === 'realtime') {
    // GA: /openai/v1/realtime?model=<deployment>; preview versions: /openai/realtime?api-version=…&deployment=….
    const deploymentName = deployment ?? q.model;
    path = apiVersion === 'v1'
      ? '/openai/v1/realtime'
      : `/openai/realtime?api-version=${encodeURIComponent(apiVersion)}${deploymentName ? `&deployment=${encodeURIComponent(deploymentName)}` : ''}`;
  } else if (apiVersion === 'v1') {
    path = joinPath('/openai/v1', route.suffix);
  } else if (route.format === 'responses') {
    // The versioned Responses API is not deployment-scoped.
    path = `/openai/responses?api-version=${encodeURIComponent(apiVersion)}`;
  } else {
    path = `/openai/deployments/${modelSegment(deployment ?? q.model)}/${route.suffix}?api-version=${encodeURIComponent(apiVersion)}`;
  }
  return { format: route.format, path: p.path && route.format !== 'embeddings' ? p.path : path, headers: {}, credential: API_KEY };
}

export const azureOpenAI: ProviderModule<AzureOpenAIConfig> = {
  token: 'providerB',
  config: (p) => (p as Extract<LLMProvider, { providerB: unknown }>).providerB,
  target: (p, c) => managedTarget(stripScheme(c.endpoint), p),
  endpoint: (p, c, q) => azureOpenAIEndpoint(p, c.apiVersion ?? 'v1', c.deploymentName, q),
};
