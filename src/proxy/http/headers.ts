import type { IncomingHttpHeaders } from 'node:http';

/** Headers as we hand them to undici or to node's writeHead: lowercased names. */
export type HeaderMap = Record<string, string | string[]>;

/** RFC 9110 §7.6.1 connection-specific fields, plus Proxy-* and HTTP/2's forbidden ones. */
const HOP_BY_HOP = new Set([
  'connection', 'keep-alive', 'proxy-connection', 'proxy-authenticate', 'proxy-authorization',
  'te', 'trailer', 'transfer-encoding', 'upgrade', 'http2-settings',
]);

/**
 * Copy end-to-end headers: drops hop-by-hop fields, the ones `Connection` names, HTTP/2 pseudo
 * headers, `host` (the caller decides the upstream Host) and `expect` (node already answered
 * 100-continue to the client). `TE: trailers` survives because gRPC needs it end to end.
 */
export function endToEndHeaders(source: IncomingHttpHeaders): HeaderMap {
  const named = connectionTokens(source.connection);
  const out: HeaderMap = {};
  for (const name in source) {
    const value = source[name];
    if (value === undefined || name.charCodeAt(0) === 58 /* : */ || name === 'host' || name === 'expect') continue;
    if (HOP_BY_HOP.has(name) || (named !== undefined && named.has(name))) {
      if (name === 'te' && isTrailersOnly(value)) out.te = 'trailers';
      continue;
    }
    out[name] = value;
  }
  return out;
}

/** Response side: same rules, nothing re-added. */
export function endToEndResponseHeaders(source: IncomingHttpHeaders): HeaderMap {
  const named = connectionTokens(source.connection);
  const out: HeaderMap = {};
  for (const name in source) {
    const value = source[name];
    if (value === undefined || name.charCodeAt(0) === 58) continue;
    if (HOP_BY_HOP.has(name) || (named !== undefined && named.has(name))) continue;
    out[name] = value;
  }
  return out;
}

/** Append the client to X-Forwarded-For and state the original scheme and host. */
export function addForwardedHeaders(headers: HeaderMap, client: string | undefined, proto: 'http' | 'https', host: string | undefined): void {
  const prior = headers['x-forwarded-for'];
  const priorText = Array.isArray(prior) ? prior.join(', ') : prior;
  if (client) headers['x-forwarded-for'] = priorText ? `${priorText}, ${client}` : client;
  headers['x-forwarded-proto'] = proto;
  if (host) headers['x-forwarded-host'] = host;
}

/**
 * Connection values that name no field beyond HOP_BY_HOP (`close` is an option, not a field; RFC
 * 9110 reserves the name). Nearly every message carries one of these, so they skip the parse.
 */
const CONNECTION_OPTIONS_ONLY = new Set(['keep-alive', 'close', 'upgrade']);

function connectionTokens(value: string | string[] | undefined): Set<string> | undefined {
  if (value === undefined) return undefined;
  if (typeof value === 'string' && CONNECTION_OPTIONS_ONLY.has(value.toLowerCase())) return undefined;
  const text = Array.isArray(value) ? value.join(',') : value;
  const tokens = new Set<string>();
  for (const t of text.split(',')) {
    const name = t.trim().toLowerCase();
    if (name) tokens.add(name);
  }
  return tokens;
}

function isTrailersOnly(value: string | string[]): boolean {
  const text = Array.isArray(value) ? value.join(',') : value;
  return text.split(',').some((t) => t.trim().toLowerCase() === 'trailers');
}
