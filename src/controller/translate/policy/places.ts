import type { InvalidPolicy } from '../../../ir/policy.ts';
import type { Contribution } from './merge.ts';
import { sectionsOf, type PolicyModel, type Section } from './model.ts';
import type { ResolvedTarget } from './targets.ts';

/** A policy attached at one point through one of its targets. */
export interface PointAttachment {
  readonly policy: PolicyModel;
  readonly targetIndex: number;
  readonly level: number;
  readonly sections: readonly Section[];
}

/** Every attachment by point key, so each place looks up only the points that cover it. */
export class AttachmentIndex {
  readonly #byPoint = new Map<string, PointAttachment[]>();
  /** When set, every point key gather() looks up is written here (apply-memo.ts: what a kept result read). */
  reads: string[] | undefined;

  /**
   * Point keys whose attachments differ from `previous`'s: a different policy object, target index,
   * level or sections, or a different count. A policy whose age order moved but whose object did
   * not is the same attachment: order only breaks ties at one place, and the relative order of
   * unchanged policies cannot move without one of them changing (issue 15).
   */
  changedSince(previous: AttachmentIndex): Set<string> {
    const changed = new Set<string>();
    for (const [key, list] of this.#byPoint) if (!sameAttachments(list, previous.#byPoint.get(key))) changed.add(key);
    for (const key of previous.#byPoint.keys()) if (!this.#byPoint.has(key)) changed.add(key);
    return changed;
  }

  add(policy: PolicyModel, targets: readonly ResolvedTarget[]): void {
    targets.forEach((target, targetIndex) => {
      for (const p of target.points) {
        const list = this.#byPoint.get(p.key) ?? [];
        list.push({ policy, targetIndex, level: p.level, sections: p.sections });
        this.#byPoint.set(p.key, list);
      }
    });
  }

  get isEmpty(): boolean {
    return this.#byPoint.size === 0;
  }

  /**
   * Contributions of `section` at the points `keys` (one place), plus the invalid policies that
   * would have applied there. `accepts` narrows further (the traffic phase).
   */
  gather(keys: readonly string[], section: Section, accepts: (policy: PolicyModel) => boolean = () => true): { contributions: Contribution[]; invalid: InvalidPolicy[] } {
    const contributions: Contribution[] = [];
    const invalid = new Map<string, InvalidPolicy>();
    const seen = new Set<string>();
    if (this.reads) for (const key of keys) this.reads.push(key);
    for (const key of keys) {
      for (const a of this.#byPoint.get(key) ?? []) {
        const id = `${a.policy.source}#${a.targetIndex}#${a.level}`;
        if (seen.has(id) || !a.sections.includes(section) || !accepts(a.policy)) continue;
        seen.add(id);
        if (a.policy.problems.length > 0) {
          if (sectionsOf(a.policy).includes(section)) invalid.set(a.policy.source, { source: a.policy.source, message: a.policy.problems.join('; ') });
          continue;
        }
        const members = a.policy[section];
        if (!members) continue;
        contributions.push({
          source: a.policy.source,
          level: a.level,
          order: a.policy.order,
          override: section === 'traffic' && a.policy.override,
          members,
          via: { policy: a.policy.source, targetIndex: a.targetIndex },
        });
      }
    }
    return { contributions, invalid: [...invalid.values()].sort((a, b) => (a.source < b.source ? -1 : a.source > b.source ? 1 : 0)) };
  }
}

function sameAttachments(a: readonly PointAttachment[], b: readonly PointAttachment[] | undefined): boolean {
  if (b === undefined || a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) {
    const x = a[i] as PointAttachment;
    const y = b[i] as PointAttachment;
    if (x.policy.object !== y.policy.object || x.targetIndex !== y.targetIndex || x.level !== y.level || x.sections.join(',') !== y.sections.join(',')) return false;
  }
  return true;
}
