import type { AuthorizationRule, InvalidPolicy, PolicySource } from '../../../ir/policy.ts';
import { AUTHORIZATION_MEMBERS, type Members } from './members.ts';

/** One policy's members offered at one place, with the level it attached at. */
export interface Contribution {
  readonly source: PolicySource;
  readonly level: number;
  /** Age order at one level: lower wins. */
  readonly order: number;
  /** strategy.inheritance Override (traffic only): the least specific such policy wins instead. */
  readonly override: boolean;
  readonly members: Members<string>;
  /** Status bookkeeping: which policy target this came through (absent for inline backend policies). */
  readonly via?: TargetHandle;
}

export interface TargetHandle {
  readonly policy: string;
  readonly targetIndex: number;
}

/** Per policy target: members that are in effect somewhere and members that lost somewhere (to whom). */
export class OutcomeTracker {
  readonly #won = new Map<string, Set<string>>();
  readonly #lost = new Map<string, Map<string, { by: PolicySource; sameLevel: boolean }>>();

  won(via: TargetHandle | undefined, member: string): void {
    if (!via) return;
    const key = `${via.policy}#${via.targetIndex}`;
    const set = this.#won.get(key) ?? new Set<string>();
    set.add(member);
    this.#won.set(key, set);
  }

  lost(via: TargetHandle | undefined, member: string, by: PolicySource, sameLevel: boolean): void {
    if (!via) return;
    const key = `${via.policy}#${via.targetIndex}`;
    const map = this.#lost.get(key) ?? new Map<string, { by: PolicySource; sameLevel: boolean }>();
    if (!map.has(member)) map.set(member, { by, sameLevel });
    this.#lost.set(key, map);
  }

  /** Members never in effect through this target, with the policy that beat each. */
  outcome(policy: string, targetIndex: number): { won: ReadonlySet<string>; lost: ReadonlyMap<string, { by: PolicySource; sameLevel: boolean }> } {
    const key = `${policy}#${targetIndex}`;
    const won = this.#won.get(key) ?? new Set<string>();
    const lost = new Map([...(this.#lost.get(key) ?? new Map<string, { by: PolicySource; sameLevel: boolean }>())].filter(([m]) => !won.has(m)));
    return { won, lost };
  }
}

export interface Merged {
  readonly members: Record<string, unknown>;
  readonly sources: Record<string, PolicySource[]>;
}

const bySpecificity = (a: Contribution, b: Contribution): number => a.level - b.level || a.order - b.order;

/**
 * Merge per top-level member, never deeply. For each member the most specific contribution wins
 * (ties: the oldest policy); a contribution with Override wins over everything more specific,
 * the least specific Override first. Authorization members accumulate every rule instead, except
 * rules more specific than an Override policy that sets authorization (they could widen access).
 */
export function mergeMembers(contributions: readonly Contribution[], names: readonly string[], tracker: OutcomeTracker): Merged {
  const sorted = [...contributions].sort(bySpecificity);
  const members: Record<string, unknown> = {};
  const sources: Record<string, PolicySource[]> = {};
  for (const name of names) {
    const setters = sorted.filter((c) => c.members[name] !== undefined);
    if (setters.length === 0) continue;
    const overriders = setters.filter((c) => c.override);
    if (AUTHORIZATION_MEMBERS.has(name)) {
      const ceiling = overriders.length > 0 ? overriders[0].level : Number.POSITIVE_INFINITY;
      const kept = setters.filter((c) => c.level <= ceiling);
      for (const c of setters) {
        if (kept.includes(c)) tracker.won(c.via, name);
        else tracker.lost(c.via, name, overriders[0].source, false);
      }
      members[name] = { rules: kept.flatMap((c) => c.members[name] as AuthorizationRule[]) };
      sources[name] = [...new Set(kept.map((c) => c.source))];
      continue;
    }
    const winner = overriders.length > 0 ? overriders[0] : setters.filter((c) => c.level === setters[setters.length - 1].level)[0];
    members[name] = winner.members[name];
    sources[name] = [winner.source];
    for (const c of setters) {
      if (c === winner) tracker.won(c.via, name);
      else tracker.lost(c.via, name, winner.source, c.level === winner.level);
    }
  }
  return { members, sources };
}

/** An effective policy object for the IR, or undefined when nothing applies. */
export function effective<T>(merged: Merged, invalid: readonly InvalidPolicy[]): T | undefined {
  if (Object.keys(merged.members).length === 0 && invalid.length === 0) return undefined;
  return { ...merged.members, sources: merged.sources, ...(invalid.length > 0 ? { invalid } : {}) } as T;
}
