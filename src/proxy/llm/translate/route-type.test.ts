import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { RouteType } from '../../../ir/ai.ts';
import { routeTypeFor } from './route-type.ts';

/** The suffixes the official SDKs send, as docs/llm.md recommends configuring them. */
const SDK_ROUTES: Record<string, RouteType> = {
  '/v1/chat/completions': 'Completions',
  '/v1/messages': 'Messages',
  '/v1/messages/count_tokens': 'TokenCount',
  '/v1/responses': 'Responses',
  '/v1/embeddings': 'Embeddings',
  '/v1/models': 'Models',
  '/v1/realtime': 'Realtime',
};

describe('routeTypeFor', () => {
  const cases: { name: string; path: string; routes?: Record<string, RouteType>; expect: RouteType }[] = [
    { name: 'without routes every path is Completions', path: '/v1/messages', expect: 'Completions' },
    { name: 'empty routes: Completions', path: '/v1/messages', routes: {}, expect: 'Completions' },
    { name: 'chat completions suffix', path: '/v1/chat/completions', routes: SDK_ROUTES, expect: 'Completions' },
    { name: 'messages behind a route prefix', path: '/anthropic/v1/messages', routes: SDK_ROUTES, expect: 'Messages' },
    { name: 'the longest suffix wins: count_tokens over messages', path: '/v1/messages/count_tokens', routes: SDK_ROUTES, expect: 'TokenCount' },
    { name: 'longest wins whatever the key order', path: '/v1/messages/count_tokens', routes: { '/count_tokens': 'TokenCount', '/messages/count_tokens': 'Passthrough' }, expect: 'Passthrough' },
    { name: 'responses', path: '/openai/v1/responses', routes: SDK_ROUTES, expect: 'Responses' },
    { name: 'embeddings', path: '/v1/embeddings', routes: SDK_ROUTES, expect: 'Embeddings' },
    { name: 'models', path: '/v1/models', routes: SDK_ROUTES, expect: 'Models' },
    { name: 'realtime', path: '/v1/realtime', routes: SDK_ROUTES, expect: 'Realtime' },
    { name: 'the query string is not part of the match', path: '/v1/messages?beta=true', routes: SDK_ROUTES, expect: 'Messages' },
    { name: 'a suffix must end the path: /messages/batches is not Messages', path: '/v1/messages/batches', routes: SDK_ROUTES, expect: 'Completions' },
    { name: 'a trailing slash does not match the bare suffix', path: '/v1/messages/', routes: SDK_ROUTES, expect: 'Completions' },
    { name: '* takes what nothing else matched', path: '/v1/files', routes: { ...SDK_ROUTES, '*': 'Passthrough' }, expect: 'Passthrough' },
    { name: 'a matching suffix beats *', path: '/v1/messages', routes: { '*': 'Passthrough', '/v1/messages': 'Messages' }, expect: 'Messages' },
    { name: '* alone matches every path', path: '/anything', routes: { '*': 'Passthrough' }, expect: 'Passthrough' },
    { name: 'ends-with is textual: a key without a slash matches inside a segment', path: '/v1/chat/completions', routes: { completions: 'Responses' }, expect: 'Responses' },
    { name: 'rerank: a /v1/rerank path is Rerank without any routes key', path: '/cohere/v1/rerank', routes: SDK_ROUTES, expect: 'Rerank' },
    { name: 'rerank: Cohere v2 path, no routes at all', path: '/v2/rerank', expect: 'Rerank' },
    { name: 'rerank: the built-in suffix beats *', path: '/v1/rerank', routes: { '*': 'Passthrough' }, expect: 'Rerank' },
    { name: 'rerank: an explicit key beats the built-in suffix', path: '/v1/rerank', routes: { '/v1/rerank': 'Passthrough' }, expect: 'Passthrough' },
    { name: 'rerank: the suffix must end the path', path: '/v1/rerank/jobs', routes: SDK_ROUTES, expect: 'Completions' },
    { name: 'matching is case sensitive', path: '/V1/MESSAGES', routes: SDK_ROUTES, expect: 'Completions' },
  ];
  for (const c of cases) it(c.name, () => assert.equal(routeTypeFor(c.path, c.routes), c.expect));
});
