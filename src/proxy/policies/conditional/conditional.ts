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

/**
 * A step that runs the selected branch's compiled policy. A branch that holds resources registers
 * their release with `onClose`; the step then has a `close()` (and a compile error releases
 * what the branches before it took).
 */
export function conditionalStep<P>(
  member: TrafficMember,
  ir: P | Conditional<P>,
  compileOne: (policy: P, where: string, onClose: (close: () => void) => void) => RunPolicy,
): TrafficStep {
  const closers: (() => void)[] = [];
  const onClose = (close: () => void) => void closers.push(close);
  let branches: readonly Branch<RunPolicy>[];
  try {
    branches = compileBranches(ir, member, (policy: P, where) => compileOne(policy, where, onClose));
  } catch (err) {
    for (const close of closers) close();
    throw err;
  }
  const close = closers.length === 0 ? undefined : () => {
    for (const c of closers.splice(0)) c();
  };
  if (branches.length === 1 && branches[0].condition === undefined) return close ? { member, onRequest: branches[0].value, close } : { member, onRequest: branches[0].value };
  const step: TrafficStep = {
    member,
    onRequest(ctx) {
      const run = selectBranch(branches, ctx);
      return run ? run(ctx) : CONTINUE;
    },
  };
  return close ? { ...step, close } : step;
}
