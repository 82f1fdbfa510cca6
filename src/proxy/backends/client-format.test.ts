import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Backend } from '../../ir/types.ts';
import { clientFormat, compileClientFormat } from './client-format.ts';

const ROUTES = { '/chat/completions': 'Completions', '/messages': 'Messages', '/messages/count_tokens': 'TokenCount', '/models': 'Models' } as const;
const ai = (routes?: Record<string, string>) => ({ key: 'b', endpoints: [], rewriteHost: false, ai: { key: 'b', groups: [], ...(routes ? { policy: { routes } } : {}) } }) as unknown as Backend;
const plain = { key: 's', endpoints: [], rewriteHost: false } as unknown as Backend;
const mcp = { key: 'm', endpoints: [], rewriteHost: false, mcp: { key: 'm', targets: [] } } as unknown as Backend;

const rows: { name: string; backend: Backend; policy?: Record<string, unknown>; path: string; headers?: Record<string, string>; format: string; fixed?: boolean }[] = [
  { name: 'Service backend: the gateway JSON, fixed', backend: plain, path: '/x', format: 'gateway', fixed: true },
  { name: 'MCP backend: JSON-RPC, fixed', backend: mcp, path: '/mcp', format: 'jsonrpc', fixed: true },
  { name: 'AI backend without routes: OpenAI, fixed', backend: ai(), path: '/v1/messages', format: 'openai', fixed: true },
  { name: 'AI backend, Messages only: Anthropic… and Completions for unmatched paths, so by path', backend: ai({ '/messages': 'Messages' }), path: '/v1/messages', format: 'anthropic' },
  { name: 'AI backend, catch-all Messages: Anthropic', backend: ai({ '*': 'Messages', '/count_tokens': 'TokenCount' }), path: '/v1/x', format: 'anthropic' },
  { name: 'AI backend, catch-all Messages: a /rerank path is still Rerank (OpenAI)', backend: ai({ '*': 'Messages' }), path: '/v2/rerank', format: 'openai' },
  { name: 'AI backend, several routes: chat completions path', backend: ai(ROUTES), path: '/a/v1/chat/completions', format: 'openai' },
  { name: 'AI backend, several routes: messages path', backend: ai(ROUTES), path: '/a/v1/messages?beta=true', format: 'anthropic' },
  { name: 'AI backend, several routes: count_tokens path', backend: ai(ROUTES), path: '/a/v1/messages/count_tokens', format: 'anthropic' },
  { name: 'AI backend: models listed by an Anthropic client', backend: ai(ROUTES), path: '/a/v1/models', headers: { 'anthropic-version': '2023-06-01' }, format: 'anthropic' },
  { name: 'AI backend: models listed by an OpenAI client', backend: ai(ROUTES), path: '/a/v1/models', format: 'openai' },
  { name: 'the route policy ai member replaces the backend routes', backend: ai(ROUTES), policy: { ai: { routes: { '*': 'Completions' } } }, path: '/a/v1/messages', format: 'openai', fixed: true },
];

describe('compileClientFormat', () => {
  for (const row of rows) {
    it(row.name, () => {
      const of = compileClientFormat(row.backend, row.policy as never);
      if (row.fixed) assert.equal(typeof of, 'string', 'decided at compile time');
      assert.equal(clientFormat(of, row.path, row.headers ?? {}), row.format);
    });
  }
});
