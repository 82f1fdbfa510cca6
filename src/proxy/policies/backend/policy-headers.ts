/**
 * The request headers route filters and traffic (or backend request-step) policies added, changed
 * or removed, for upstream calls that build their own request (AI provider calls, MCP target
 * calls): those changes reach the upstream on every route type, while client headers no policy
 * touched keep each kind's own rules (docs/llm.md, docs/mcp.md). Computed only for requests whose
 * headers a filter or policy may have changed (`mayHaveChanged`), once per request.
 */
import type { IncomingHttpHeaders } from 'node:http';

/** Headers set (name → value) or removed (value undefined); lowercase names. */
export type HeaderChanges = ReadonlyMap<string, string | undefined>;

export const NO_HEADER_CHANGES: HeaderChanges = new Map();

/**
 * Never part of the delta: hop-by-hop fields, what the gateway derives itself for every upstream
 * call (Host, framing, X-Forwarded-*), and HTTP/2 pseudo headers.
 */
const GATEWAY_OWNED = new Set([
  'connection', 'keep-alive', 'proxy-connection', 'proxy-authenticate', 'proxy-authorization', 'te', 'trailer', 'transfer-encoding',
  'upgrade', 'http2-settings', 'host', 'content-length', 'expect', 'x-forwarded-for', 'x-forwarded-proto', 'x-forwarded-host',
]);

function joined(value: string | readonly string[] | undefined): string | undefined {
  return value === undefined ? undefined : typeof value === 'string' ? value : value.join(', ');
}

/**
 * What `upstream` (the headers after filters and policies) changes relative to `client` (the
 * headers the client sent). Empty unless `mayHaveChanged`.
 */
export function policyHeaderChanges(client: IncomingHttpHeaders, upstream: Readonly<Record<string, string | readonly string[] | undefined>>, mayHaveChanged: boolean): HeaderChanges {
  if (!mayHaveChanged) return NO_HEADER_CHANGES;
  let changes: Map<string, string | undefined> | undefined;
  for (const name in upstream) {
    const lower = name.toLowerCase();
    if (GATEWAY_OWNED.has(lower) || lower.charCodeAt(0) === 58 /* : */) continue;
    const value = joined(upstream[name]);
    if (value === undefined || value === joined(client[lower])) continue;
    (changes ??= new Map()).set(lower, value);
  }
  for (const name in client) {
    if (GATEWAY_OWNED.has(name) || name.charCodeAt(0) === 58 || client[name] === undefined) continue;
    if (upstream[name] === undefined) (changes ??= new Map()).set(name, undefined);
  }
  return changes ?? NO_HEADER_CHANGES;
}

/** Applies header changes to a request's headers (in place); `skip` names stay as they are. */
export function applyHeaderChanges(headers: Record<string, string | string[]>, changes: HeaderChanges, skip?: ReadonlySet<string>): void {
  for (const [name, value] of changes) {
    if (skip?.has(name)) continue;
    if (value === undefined) delete headers[name];
    else headers[name] = value;
  }
}
