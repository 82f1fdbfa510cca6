/**
 * Header shapes shared by the clients and the conversions to and from Envoy's HeaderMap /
 * HeaderValueOption, so the pipeline sees plain name/value lists.
 */
import { create } from '@bufbuild/protobuf';
import type { HeaderMap, HeaderValue, HeaderValueOption } from './gen/envoy/config/core/v3/base_pb.js';
import { HeaderMapSchema, HeaderValueOption_HeaderAppendAction, HeaderValueSchema } from './gen/envoy/config/core/v3/base_pb.js';

/** Node's IncomingHttpHeaders shape (names in any case). */
export type RequestHeaders = Readonly<Record<string, string | readonly string[] | undefined>>;

export type HeaderPair = readonly [name: string, value: string];

/** What a service asks the gateway to do to a header block. Names are lower-case. */
export interface HeaderMutations {
  /** Replace any existing value. */
  readonly set: readonly HeaderPair[];
  /** Append a value, keeping existing ones. */
  readonly add: readonly HeaderPair[];
  readonly remove: readonly string[];
  /** Set only when the header is absent (Envoy's ADD_IF_ABSENT). */
  readonly setIfAbsent?: readonly HeaderPair[];
}

export const NO_MUTATIONS: HeaderMutations = Object.freeze({ set: [], add: [], remove: [] });

export function isEmpty(m: HeaderMutations): boolean {
  return m.set.length === 0 && m.add.length === 0 && m.remove.length === 0 && (m.setIfAbsent?.length ?? 0) === 0;
}

/** Lower-case name/value pairs, one per value (repeated headers stay separate). */
export function headerPairs(headers: RequestHeaders): HeaderPair[] {
  const out: HeaderPair[] = [];
  for (const [name, value] of Object.entries(headers)) {
    if (value === undefined) continue;
    for (const v of typeof value === 'string' ? [value] : value) out.push([name.toLowerCase(), v]);
  }
  return out;
}

/** Envoy's `headers` map form: repeated values joined with ",". */
export function joinedHeaders(headers: RequestHeaders): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of headerPairs(headers)) out[name] = name in out ? `${out[name]},${value}` : value;
  return out;
}

const utf8 = new TextEncoder();
const text = new TextDecoder();

/** A HeaderMap carrying raw (byte) values, as current Envoy sends. */
export function toHeaderMap(pairs: readonly HeaderPair[]): HeaderMap {
  return create(HeaderMapSchema, { headers: pairs.map(([key, value]) => create(HeaderValueSchema, { key, rawValue: utf8.encode(value) })) });
}

/** A HeaderValue's value: servers may fill either `raw_value` (current) or `value` (older). */
export function headerValueText(h: HeaderValue): string {
  return h.rawValue.length > 0 ? text.decode(h.rawValue) : h.value;
}

/**
 * Envoy's HeaderValueOption semantics: `append_action` (or the deprecated `append` bool, which
 * wins when set) decides between appending and overwriting.
 */
export function fromHeaderOptions(options: readonly HeaderValueOption[], remove: readonly string[] = []): HeaderMutations {
  const set: HeaderPair[] = [];
  const add: HeaderPair[] = [];
  const setIfAbsent: HeaderPair[] = [];
  for (const option of options) {
    if (!option.header) continue;
    const pair: HeaderPair = [option.header.key.toLowerCase(), headerValueText(option.header)];
    const append = option.append !== undefined
      ? option.append
      : option.appendAction === HeaderValueOption_HeaderAppendAction.APPEND_IF_EXISTS_OR_ADD;
    if (option.appendAction === HeaderValueOption_HeaderAppendAction.ADD_IF_ABSENT && option.append === undefined) setIfAbsent.push(pair);
    else (append ? add : set).push(pair);
  }
  return { set, add, remove: remove.map((n) => n.toLowerCase()), ...(setIfAbsent.length > 0 ? { setIfAbsent } : {}) };
}

/** Applies mutations to a plain header record (lower-case keys), returning a new record. */
export function applyMutations(headers: RequestHeaders, m: HeaderMutations): Record<string, string | string[]> {
  const out: Record<string, string | string[]> = {};
  for (const [name, value] of headerPairs(headers)) {
    const existing = out[name];
    out[name] = existing === undefined ? value : Array.isArray(existing) ? [...existing, value] : [existing, value];
  }
  for (const name of m.remove) delete out[name];
  for (const [name, value] of m.set) out[name] = value;
  for (const [name, value] of m.setIfAbsent ?? []) if (out[name] === undefined) out[name] = value;
  for (const [name, value] of m.add) {
    const existing = out[name];
    out[name] = existing === undefined ? value : Array.isArray(existing) ? [...existing, value] : [existing, value];
  }
  return out;
}
