import type { ProxyError } from '../http/errors.ts';
import { normalizeTarget, PathRefusal } from '../http/path.ts';
import type { DownstreamRequest } from '../http/downstream.ts';
import { rememberHttpsTarget } from '../http/absolute-form.ts';

/**
 * The single point where a request enters the pipeline (ordinary requests, HTTP/1 and HTTP/2,
 * and upgrade requests alike), before PreRouting policies, route matching, every policy and the
 * upstream see it. It enforces the protocol's rules on Host and rewrites `req.url` to the
 * canonical path (http/path.ts), so everything downstream — routing, CEL `request.path`, URL
 * rewrites, in-process backends, the access log — reads the same spelling.
 *
 * Returns the error to answer (400) or undefined when the request may go on.
 */
export function admitRequest(req: DownstreamRequest): ProxyError | undefined {
  const hostError = 'stream' in req ? checkHttp2Authority(req) : checkHttp1Host(req);
  if (hostError !== undefined) return hostError;
  const url = req.url ?? '/';
  const normalized = normalizeTarget(url);
  if (normalized instanceof PathRefusal) return { code: 'BAD_REQUEST', reason: normalized.reason };
  if (normalized !== url) req.url = normalized;
  return undefined;
}

const TWO_HOSTS: ProxyError = { code: 'BAD_REQUEST', reason: 'more than one Host header' };
const NO_HOST: ProxyError = { code: 'BAD_REQUEST', reason: 'an HTTP/1.1 request needs a Host header' };
const BAD_ABSOLUTE: ProxyError = { code: 'BAD_REQUEST', reason: 'invalid authority in the request target' };
const AUTHORITY_MISMATCH: ProxyError = { code: 'BAD_REQUEST', reason: 'the host header differs from :authority' };

/**
 * RFC 9112 §3.2: exactly one Host on HTTP/1.1 (node keeps only the first of several, so count the
 * raw headers). §3.2.2: with an absolute-form target the target's authority is the host — the
 * Host header is replaced by it and the target reduced to origin-form.
 */
function checkHttp1Host(req: DownstreamRequest): ProxyError | undefined {
  const hosts = countHosts(req.rawHeaders);
  if (hosts > 1) return TWO_HOSTS;
  const url = req.url ?? '/';
  if (url.charCodeAt(0) !== 0x2f /* / */ && /^https?:\/\//i.test(url)) {
    const start = url.indexOf('//') + 2;
    let end = start;
    while (end < url.length && !'/?#'.includes(url[end])) end++;
    const authority = url.slice(start, end);
    // RFC 9110 §4.2.4: userinfo has no place in an http(s) URI a server receives.
    if (authority === '' || authority.includes('@')) return BAD_ABSOLUTE;
    req.headers.host = authority;
    if (url.charCodeAt(4) === 0x73 || url.charCodeAt(4) === 0x53 /* s: https:// */) rememberHttpsTarget(req);
    const rest = url.slice(end);
    req.url = rest.charCodeAt(0) === 0x2f ? rest : `/${rest}`;
    return undefined;
  }
  if (hosts === 0 && req.httpVersion === '1.1') return NO_HOST;
  return undefined;
}

/**
 * RFC 9113 §8.3.1: a Host header naming another entity than `:authority` makes the request
 * malformed. Compared case-insensitively, port included.
 */
function checkHttp2Authority(req: DownstreamRequest): ProxyError | undefined {
  const host = req.headers.host;
  if (host === undefined) return undefined;
  // Two `host` fields never get here: nghttp2 resets such a stream (PROTOCOL_ERROR) itself.
  if (typeof host !== 'string') return TWO_HOSTS;
  const authority = req.headers[':authority'];
  if (typeof authority === 'string' && authority.toLowerCase() !== host.toLowerCase()) return AUTHORITY_MISMATCH;
  return undefined;
}

/** Host fields among the raw headers (name, value, name, value, …). */
function countHosts(raw: readonly string[]): number {
  let hosts = 0;
  for (let i = 0; i < raw.length; i += 2) {
    const name = raw[i];
    if (name.length === 4 && name.toLowerCase() === 'host') hosts++;
  }
  return hosts;
}
