/**
 * providerF: Google Vertex AI. The model picks the surface: Gemini models use generateContent,
 * Claude models use rawPredict (Messages body with `anthropic_version`, no `model`), everything
 * else the OpenAI-compatible endpoint. Rerank goes to the Discovery Engine ranking API (the Vertex
 * AI ranking API), a global service on its own host, with the same access token.
 */
import type { LLMProvider, VertexConfig } from '../config.ts';
import { BEARER, managedTarget, modelSegment } from './paths.ts';
import { bareModel } from './gemini.ts';
import type { ProviderModule } from './types.ts';
import { vertexRank } from './conversions.ts';

export const VERTEX_ANTHROPIC_VERSION = 'vertex-2023-10-16';

function isClaude(model: string): boolean {
  return /^(publishers\/anthropic\/models\/)?claude/.test(model);
}

function isGemini(model: string): boolean {
  return /^(publishers\/google\/models\/|models\/)?gemini/.test(model);
}

function location(c: VertexConfig): string {
  return `/v1/projects/${encodeURIComponent(c.projectId)}/locations/${encodeURIComponent(c.region)}`;
}

export const vertex: ProviderModule<VertexConfig> = {
  token: 'providerF',
  config: (p) => (p as Extract<LLMProvider, { providerF: unknown }>).providerF,
  target: (p, c) => managedTarget(c.region === 'global' ? 'aiplatform.googleapis.com' : `${c.region}-aiplatform.googleapis.com`, p),
  endpoint(p, c, q) {
    if (q.route === 'Rerank') {
      const path = `/v1/projects/${encodeURIComponent(c.projectId)}/locations/global/rankingConfigs/default_ranking_config:rank`;
      return { format: 'vertex_rank', path, headers: {}, credential: BEARER, target: managedTarget('discoveryengine.googleapis.com', p), conversion: vertexRank };
    }
    const chatLike = q.route === 'Completions' || q.route === 'Messages' || q.route === 'Responses';
    if (isClaude(q.model)) {
      const model = modelSegment(q.model.replace(/^publishers\/anthropic\/models\//, ''));
      const base = `${location(c)}/publishers/anthropic/models`;
      if (chatLike) return { format: 'messages', path: p.path ?? `${base}/${model}:${q.stream ? 'streamRawPredict' : 'rawPredict'}`, headers: {}, credential: BEARER, modelInPath: true };
      if (q.route === 'TokenCount') return { format: 'count_tokens', path: `${base}/count-tokens:rawPredict`, headers: {}, credential: BEARER };
      return undefined;
    }
    if (isGemini(q.model)) {
      const base = `${location(c)}/publishers/google/models/${modelSegment(bareModel(q.model.replace(/^publishers\/google\/models\//, '')))}`;
      if (chatLike) return { format: 'gemini', path: p.path ?? (q.stream ? `${base}:streamGenerateContent?alt=sse` : `${base}:generateContent`), headers: {}, credential: BEARER, modelInPath: true };
      if (q.route === 'TokenCount') return { format: 'gemini_count_tokens', path: `${base}:countTokens`, headers: {}, credential: BEARER, modelInPath: true };
    }
    if (q.route === 'Completions' || q.route === 'Messages') {
      return { format: 'chat', path: p.path ?? `${location(c)}/endpoints/openapi/chat/completions`, headers: {}, credential: BEARER };
    }
    if (q.route === 'Embeddings') return { format: 'embeddings', path: `${location(c)}/endpoints/openapi/embeddings`, headers: {}, credential: BEARER };
    return undefined;
  },
  finalizeBody(_c, format, body) {
    if (format !== 'messages' && format !== 'count_tokens') return body;
    // rawPredict takes the version in the body; the model is in the path (count-tokens keeps it).
    const { model, ...rest } = body;
    return format === 'messages' ? { anthropic_version: VERTEX_ANTHROPIC_VERSION, ...rest } : { anthropic_version: VERTEX_ANTHROPIC_VERSION, model, ...rest };
  },
};
