/**
 * The "X or conditional" shape shared by extAuth, extProc, directResponse, transformation and
 * rateLimit: either one policy, or `conditional: [{ condition?, policy }]` where the first entry
 * whose condition holds runs and a final entry without a condition is the fallback. A condition
 * that fails to evaluate does not match (the next entry is tried); when nothing matches the
 * member does nothing for this request.
 */
import { evalBool, type Program } from '../../../cel/index.ts';
import type { Conditional, TrafficMember } from '../../../ir/policy.ts';
import { activationOf, program } from '../cel.ts';
import type { PolicyContext } from '../context.ts';
import { CONTINUE, type PolicyResult } from '../result.ts';
import type { TrafficStep } from '../step.ts';

export interface Branch<T> {
  readonly condition: Program | undefined;
  readonly value: T;
}

export function isConditional<P>(member: P | Conditional<P>): member is Conditional<P> {
  return typeof member === 'object' && member !== null && Array.isArray((member as Partial<Conditional<P>>).conditional);
}

/**
 * Compiles each entry with `compileOne(policy, where)`; a plain member becomes one unconditional
 * branch. Throws (member invalid) on a bad condition, or whatever `compileOne` throws.
 */
export function compileBranches<P, T>(member: P | Conditional<P>, name: string, compileOne: (policy: P, where: string) => T): readonly Branch<T>[] {
  if (!isConditional(member)) return [{ condition: undefined, value: compileOne(member, name) }];
  return member.conditional.map((entry, i) => ({
    condition: entry.condition !== undefined ? program(entry.condition, `${name}.conditional[${i}].condition`, ['bool']) : undefined,
    value: compileOne(entry.policy, `${name}.conditional[${i}].policy`),
  }));
}

/** The first branch whose condition holds (or that has none); undefined when none does. */
export function selectBranch<T>(branches: readonly Branch<T>[], ctx: PolicyContext): T | undefined {
  if (branches.length === 1 && branches[0].condition === undefined) return branches[0].value;
  const activation = activationOf(ctx);
  for (const b of branches) {
    if (b.condition === undefined || evalBool(b.condition, activation) === true) return b.value;
  }
  return undefined;
}

export type RunPolicy = (ctx: PolicyContext) => PolicyResult | Promise<PolicyResult>;

/** A step that runs the selected branch's compiled policy. */
export function conditionalStep<P>(member: TrafficMember, ir: P | Conditional<P>, compileOne: (policy: P, where: string) => RunPolicy): TrafficStep {
  const branches = compileBranches(ir, member, compileOne);
  if (branches.length === 1 && branches[0].condition === undefined) return { member, onRequest: branches[0].value };
  return {
    member,
    onRequest(ctx) {
      const run = selectBranch(branches, ctx);
      return run ? run(ctx) : CONTINUE;
    },
  };
}
