/** Header shaping between the client's request and the provider's: what is dropped, joined, kept. */
import type { DownstreamRequest } from '../../../http/downstream.ts';

/** Client headers worth keeping on a translated request: they select API features, not identity. */
export const FORWARDED_TO_MESSAGES = ['anthropic-beta'] as const;
export const HOP_BY_HOP = new Set(['connection', 'keep-alive', 'proxy-connection', 'transfer-encoding', 'upgrade', 'te', 'trailer', 'host', 'content-length', ':authority', ':method', ':path', ':scheme']);

/** Node's header names are already lowercase; only repeated values (arrays) need joining. */
export function plainHeaders(h: DownstreamRequest['headers']): Record<string, string | undefined> {
  for (const k in h) if (typeof h[k] !== 'string' && h[k] !== undefined) return joinRepeated(h);
  return h as Record<string, string | undefined>;
}

function joinRepeated(h: DownstreamRequest['headers']): Record<string, string | undefined> {
  const out: Record<string, string | undefined> = {};
  for (const [k, v] of Object.entries(h)) out[k.toLowerCase()] = Array.isArray(v) ? v.join(', ') : v;
  return out;
}

export function passthroughHeaders(h: Readonly<Record<string, string | string[]>>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(h)) if (!HOP_BY_HOP.has(k.toLowerCase())) out[k.toLowerCase()] = Array.isArray(v) ? v.join(', ') : v;
  return out;
}

export function pickHeaders(h: Record<string, string | string[] | undefined>, names: readonly string[]): Record<string, string> {
  const out: Record<string, string> = {};
  for (const n of names) {
    const v = h[n];
    if (v !== undefined) out[n] = Array.isArray(v) ? v.join(', ') : v;
  }
  return out;
}

/** A masked body has a new length: the framing is recomputed from the body. */
export function withoutLength(headers: Readonly<Record<string, string>>): Record<string, string> {
  const { 'content-length': _length, ...rest } = headers;
  return rest;
}
