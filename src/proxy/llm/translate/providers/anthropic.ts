/** providerD: Anthropic. Messages and count_tokens natively; chat and Responses clients are translated to Messages. */
import type { AnthropicConfig, LLMProvider } from '../config.ts';
import { joinPath, managedTarget } from './paths.ts';
import type { ProviderModule } from './types.ts';

export const ANTHROPIC_VERSION = '2023-06-01';

export const anthropic: ProviderModule<AnthropicConfig> = {
  token: 'providerD',
  config: (p) => (p as Extract<LLMProvider, { providerD: unknown }>).providerD,
  target: (p) => managedTarget('api.anthropic.com', p),
  endpoint(p, _c, q) {
    const prefix = p.pathPrefix ?? '/v1';
    const headers = { 'anthropic-version': ANTHROPIC_VERSION };
    const credential = { kind: 'header', name: 'x-api-key' } as const;
    if (q.route === 'Completions' || q.route === 'Messages' || q.route === 'Responses') {
      return { format: 'messages', path: p.path ?? joinPath(prefix, 'messages'), headers, credential };
    }
    if (q.route === 'TokenCount') return { format: 'count_tokens', path: joinPath(prefix, 'messages/count_tokens'), headers, credential };
    return undefined;
  },
};
