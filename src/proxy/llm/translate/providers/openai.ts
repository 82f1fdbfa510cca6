/** providerA: OpenAI. Chat completions, Responses and embeddings natively; Messages clients are translated to chat. */
import type { LLMProvider, OpenAIConfig } from '../config.ts';
import { BEARER, joinPath, managedTarget, OPENAI_SUFFIX } from './paths.ts';
import type { ProviderModule } from './types.ts';

export const openai: ProviderModule<OpenAIConfig> = {
  token: 'providerA',
  config: (p) => (p as Extract<LLMProvider, { providerA: unknown }>).providerA,
  target: (p) => managedTarget('api.openai.com', p),
  endpoint(p, _c, q) {
    const route = OPENAI_SUFFIX[q.route];
    if (!route) return undefined;
    const prefix = p.pathPrefix ?? '/v1';
    // `path` replaces the provider's own path for the generation routes.
    const path = p.path && route.format !== 'embeddings' ? p.path : joinPath(prefix, route.suffix);
    return { format: route.format, path, headers: {}, credential: BEARER };
  },
};
