/** providerE: Google Gemini API. generateContent natively (thoughtSignature survives); embeddings via the OpenAI-compatible surface. */
import type { GeminiConfig, LLMProvider } from '../config.ts';
import { BEARER, managedTarget, modelSegment } from './paths.ts';
import type { ProviderModule } from './types.ts';

const API_KEY = { kind: 'header', name: 'x-goog-api-key' } as const;

/** Gemini model ids may arrive as `models/gemini-…`. */
export function bareModel(model: string): string {
  return model.replace(/^models\//, '');
}

export const gemini: ProviderModule<GeminiConfig> = {
  token: 'providerE',
  config: (p) => (p as Extract<LLMProvider, { providerE: unknown }>).providerE,
  target: (p) => managedTarget('generativelanguage.googleapis.com', p),
  endpoint(p, _c, q) {
    const base = `/v1beta/models/${modelSegment(bareModel(q.model))}`;
    if (q.route === 'Completions' || q.route === 'Messages' || q.route === 'Responses') {
      const path = q.stream ? `${base}:streamGenerateContent?alt=sse` : `${base}:generateContent`;
      return { format: 'gemini', path: p.path ?? path, headers: {}, credential: API_KEY, modelInPath: true };
    }
    if (q.route === 'TokenCount') return { format: 'gemini_count_tokens', path: `${base}:countTokens`, headers: {}, credential: API_KEY, modelInPath: true };
    if (q.route === 'Embeddings') return { format: 'embeddings', path: '/v1beta/openai/embeddings', headers: {}, credential: BEARER };
    return undefined;
  },
};
