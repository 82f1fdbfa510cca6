/**
 * Which format a backend's clients read errors in (docs/errors.md), decided when the config is
 * compiled: MCP clients get JSON-RPC, AI clients the format of the route type their path maps to
 * (OpenAI's for Completions/Responses/Embeddings …, Anthropic's for Messages/TokenCount),
 * everyone else the gateway's JSON. Nothing here runs per request unless an error is rendered.
 */
import type { IncomingHttpHeaders } from 'node:http';
import type { RouteType } from '../../ir/ai.ts';
import type { BackendPolicy } from '../../ir/policy.ts';
import type { Backend } from '../../ir/types.ts';
import type { ClientFormat } from '../http/error-format.ts';
import { routeTypeFor } from '../llm/translate/route-type.ts';

/** A format fixed at compile time, or (AI backends serving several route types) one chosen by path when an error is rendered. */
export type ClientFormatOf = ClientFormat | ((path: string, headers: IncomingHttpHeaders) => ClientFormat);

/** The LLM gateway's rule: Anthropic's routes and an Anthropic client listing models get Anthropic's format. */
export function formatOfRouteType(route: RouteType, anthropicVersion: unknown): 'openai' | 'anthropic' {
  if (route === 'Messages' || route === 'TokenCount') return 'anthropic';
  return route === 'Models' && typeof anthropicVersion === 'string' ? 'anthropic' : 'openai';
}

/** The format of a backend's clients under the effective backend policy of one rule × backend × listener. */
export function compileClientFormat(backend: Backend, policy: BackendPolicy | undefined): ClientFormatOf {
  if (backend.mcp) return 'jsonrpc';
  // A2A clients speak JSON-RPC, except when fetching the agent card (a plain GET).
  if (backend.a2a) return a2aFormat(new Set(backend.a2a.cardPaths));
  if (!backend.ai) return 'gateway';
  // As the LLM handler reads it: the route policy's `ai` member replaces the backend's own.
  const ai = policy?.ai ?? backend.ai.policy;
  const routes = ai?.routes;
  const reachable = new Set<RouteType>(Object.values(routes ?? {}));
  if (!routes?.['*']) reachable.add('Completions');
  reachable.add('Rerank');
  const formats = new Set([...reachable].map((r) => (r === 'Models' ? 'models' : formatOfRouteType(r, undefined))));
  if (formats.size === 1 && !formats.has('models')) return [...formats][0] as ClientFormat;
  return (path, headers) => formatOfRouteType(routeTypeFor(path, routes), headers['anthropic-version']);
}

function a2aFormat(cardPaths: ReadonlySet<string>): ClientFormatOf {
  return (path) => {
    const q = path.indexOf('?');
    return cardPaths.has(q === -1 ? path : path.slice(0, q)) ? 'gateway' : 'jsonrpc';
  };
}

export function clientFormat(of: ClientFormatOf, path: string, headers: IncomingHttpHeaders): ClientFormat {
  return typeof of === 'string' ? of : of(path, headers);
}
