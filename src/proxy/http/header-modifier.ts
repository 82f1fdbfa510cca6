import type { HeaderModifier } from '../../ir/types.ts';
import type { HeaderMap } from './headers.ts';

/** A HeaderModifier with lowercased names, ready to apply. */
export interface CompiledHeaderModifier {
  readonly remove: readonly string[];
  readonly set: readonly (readonly [string, string])[];
  readonly add: readonly (readonly [string, string])[];
}

export function compileHeaderModifier(m: HeaderModifier): CompiledHeaderModifier {
  return {
    remove: m.remove.map((n) => n.toLowerCase()),
    set: m.set.map((h) => [h.name.toLowerCase(), h.value] as const),
    add: m.add.map((h) => [h.name.toLowerCase(), h.value] as const),
  };
}

/**
 * Remove, then set, then add (Envoy's order). `add` appends to an existing value; on requests
 * the values are comma-joined (RFC 9110 list syntax), on responses kept as separate fields so
 * Set-Cookie stays valid.
 */
export function applyHeaderModifier(headers: HeaderMap, m: CompiledHeaderModifier, side: 'request' | 'response'): void {
  for (const name of m.remove) delete headers[name];
  for (const [name, value] of m.set) headers[name] = value;
  for (const [name, value] of m.add) {
    const prior = headers[name];
    if (prior === undefined) headers[name] = value;
    else if (side === 'response') headers[name] = Array.isArray(prior) ? [...prior, value] : [prior, value];
    else headers[name] = `${Array.isArray(prior) ? prior.join(',') : prior},${value}`;
  }
}
