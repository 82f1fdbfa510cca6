/**
 * custom: a self-hosted or OpenAI-compatible server. It declares the formats it speaks; a client
 * format it speaks goes through untouched, any other generation request is translated to the
 * first generation format it declares (Completions, then Messages, then Responses).
 */
import type { CustomConfig, LLMProvider, ProviderFormat, RouteType } from '../config.ts';
import { BEARER } from './paths.ts';
import type { ProviderModule, UpstreamFormat } from './types.ts';

const DEFAULT_PATH: Record<ProviderFormat, string> = {
  Completions: '/v1/chat/completions',
  Messages: '/v1/messages',
  Responses: '/v1/responses',
  Embeddings: '/v1/embeddings',
  TokenCount: '/v1/messages/count_tokens',
  Realtime: '/v1/realtime',
  Rerank: '/v1/rerank',
};

const WIRE: Partial<Record<ProviderFormat, UpstreamFormat>> = {
  Completions: 'chat', Messages: 'messages', Responses: 'responses', Embeddings: 'embeddings', TokenCount: 'count_tokens', Realtime: 'realtime', Rerank: 'rerank',
};

const ROUTE_FORMAT: Partial<Record<RouteType, ProviderFormat>> = {
  Completions: 'Completions', Messages: 'Messages', Responses: 'Responses', Embeddings: 'Embeddings', TokenCount: 'TokenCount', Realtime: 'Realtime', Rerank: 'Rerank',
};

export const custom: ProviderModule<CustomConfig> = {
  token: 'custom',
  config: (p) => (p as Extract<LLMProvider, { custom: unknown }>).custom,
  target(p, c) {
    const port = p.port ?? c.backendRef?.port ?? 80;
    return { host: p.host ?? c.backendRef?.name ?? '', port, tls: port === 443 };
  },
  endpoint(p, c, q) {
    const wanted = ROUTE_FORMAT[q.route];
    if (!wanted) return undefined;
    const declared = (f: ProviderFormat) => c.formats.find((x) => x.type === f);
    let use = declared(wanted);
    if (!use && (q.route === 'Completions' || q.route === 'Messages' || q.route === 'Responses')) {
      use = declared('Completions') ?? declared('Messages') ?? declared('Responses');
    }
    const format = use && WIRE[use.type];
    if (!use || !format) return undefined;
    return { format, path: use.path ?? p.path ?? DEFAULT_PATH[use.type], headers: {}, credential: BEARER };
  },
};
