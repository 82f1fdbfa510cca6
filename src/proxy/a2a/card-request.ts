/**
 * Which requests to an A2A backend fetch its agent card, and the response filter that rewrites
 * the answer to them (agent-card.ts). Everything else an A2A backend gets (JSON-RPC calls, their
 * SSE streams, the REST binding) is forwarded as to any host, with every policy on the one path.
 */
import type { IncomingHttpHeaders } from 'node:http';
import { agentCardFilter, rewrittenPrefix, type CardFilter } from './agent-card.ts';

/** The parts of a forward this needs; `headers` are the upstream request's, changed in place. */
export interface CardRequestView {
  readonly method: string;
  /** The path the client asked for (before URLRewrite, no query). */
  readonly clientPath: string;
  /** Upstream request target (path and query), after URLRewrite. */
  readonly path: string;
  readonly headers: Record<string, string | string[] | undefined>;
}

/**
 * The card filter for a GET of one of `cardPaths`, or undefined for any other request (the
 * common case: one method compare, no allocation). The origin is the one the client used
 * (scheme of the listener, its Host / :authority), so the card names the gateway as reached.
 */
export function agentCardRequest(
  cardPaths: ReadonlySet<string>,
  request: CardRequestView,
  client: IncomingHttpHeaders,
  scheme: 'http' | 'https',
): CardFilter | undefined {
  if (request.method !== 'GET') return undefined;
  const q = request.path.indexOf('?');
  const upstreamPath = q === -1 ? request.path : request.path.slice(0, q);
  if (!cardPaths.has(upstreamPath)) return undefined;
  const host = (client[':authority'] as string | undefined) ?? client.host;
  // No Host (HTTP/1.0): nothing to point the card at; it goes out as the agent wrote it.
  if (typeof host !== 'string' || host === '') return undefined;
  // The rewrite reads the card as JSON: ask for it uncompressed.
  delete request.headers['accept-encoding'];
  return agentCardFilter(`${scheme}://${host}`, rewrittenPrefix(request.clientPath, upstreamPath));
}
