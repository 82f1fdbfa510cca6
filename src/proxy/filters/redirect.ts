import type { Filter } from '../../ir/types.ts';
import type { PathMatcher } from '../routing/matchers.ts';
import { modifyPath } from './path-modifier.ts';

export type RedirectFilter = Extract<Filter, { type: 'RequestRedirect' }>;

export interface RedirectRequest {
  readonly scheme: 'http' | 'https';
  /** Normalized host without port. */
  readonly host: string;
  /** The Gateway listener's port (the IR port, which is what clients dial). */
  readonly listenerPort: number;
  readonly path: string;
  /** Raw query without `?`, kept on the redirect. */
  readonly query: string;
}

const WELL_KNOWN_PORT = { http: 80, https: 443 } as const;

/**
 * The Location of a RequestRedirect, with the Gateway API's port rules: an explicit port wins;
 * else a changed scheme implies its well-known port; else the listener's port. The port is left
 * out when it is the scheme's well-known one.
 */
export function redirectLocation(f: RedirectFilter, req: RedirectRequest, matched: PathMatcher): string {
  const scheme = f.scheme ?? req.scheme;
  const host = f.hostname ?? req.host;
  const port = f.port ?? (f.scheme !== undefined ? WELL_KNOWN_PORT[f.scheme] : req.listenerPort);
  const authority = port === WELL_KNOWN_PORT[scheme] ? formatHost(host) : `${formatHost(host)}:${port}`;
  const path = f.path ? modifyPath(req.path, f.path, matched) : req.path;
  return `${scheme}://${authority}${path}${req.query ? `?${req.query}` : ''}`;
}

function formatHost(host: string): string {
  return host.includes(':') ? `[${host}]` : host;
}
