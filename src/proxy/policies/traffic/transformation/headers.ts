/** Header set/add/remove with CEL values, applied to a header map (request or response side). */
import { evalString, type Activation, type Program } from '../../../../cel/index.ts';
import type { HeaderTransform } from '../../../../ir/policy.ts';
import type { HeaderMap } from '../../../http/headers.ts';
import { program } from '../../cel.ts';

export interface CompiledHeaderTransform {
  readonly set: readonly { readonly name: string; readonly value: Program }[];
  readonly add: readonly { readonly name: string; readonly value: Program }[];
  readonly remove: readonly string[];
}

/** `:authority` is the Host header on the wire; other pseudo-headers cannot be set this way. */
function wireName(name: string, where: string): string {
  const lower = name.toLowerCase();
  if (lower === ':authority') return 'host';
  if (lower.startsWith(':')) throw new Error(`${where}: ${name} cannot be transformed (only :authority among pseudo-headers)`);
  return lower;
}

export function compileHeaderTransform(t: HeaderTransform, where: string): CompiledHeaderTransform {
  const entries = (list: HeaderTransform['set'], kind: string) =>
    (list ?? []).map((h, i) => ({ name: wireName(h.name, `${where}.${kind}[${i}]`), value: program(h.value, `${where}.${kind}[${i}].value`) }));
  return {
    set: entries(t.set, 'set'),
    add: entries(t.add, 'add'),
    remove: (t.remove ?? []).map((n, i) => wireName(n, `${where}.remove[${i}]`)),
  };
}

export function isEmptyHeaderTransform(t: CompiledHeaderTransform): boolean {
  return t.set.length === 0 && t.add.length === 0 && t.remove.length === 0;
}

/**
 * Every value is evaluated against the same activation (the message as it was before this
 * transform), then removals, sets and additions apply in that order. A failing value leaves its
 * header untouched, like a failing log attribute.
 */
export function applyHeaderTransform(t: CompiledHeaderTransform, headers: HeaderMap, activation: Activation): void {
  const sets = t.set.map((h) => [h.name, evalString(h.value, activation)] as const);
  const adds = t.add.map((h) => [h.name, evalString(h.value, activation)] as const);
  for (const name of t.remove) delete headers[name];
  for (const [name, value] of sets) if (value.ok) headers[name] = value.value;
  for (const [name, value] of adds) {
    if (!value.ok) continue;
    const existing = headers[name];
    headers[name] = existing === undefined ? value.value : [...(Array.isArray(existing) ? existing : [existing]), value.value];
  }
}
