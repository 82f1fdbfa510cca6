import type { Condition, ObjectStatus } from '../../../api/gateway/object.ts';
import { condition } from '../status/conditions.ts';
import type { OutcomeTracker } from './merge.ts';
import { sectionsOf, type PolicyModel, type Section } from './model.ts';
import type { ResolvedTarget } from './targets.ts';

/** The Gateway API caps status.ancestors at 16 entries. */
const MAX_ANCESTORS = 16;

/**
 * ProxyPolicy status: one ancestor per target with `Accepted` (is the policy valid for this
 * target?) and `Attached` (is it in effect there: Attached, Merged with others, or Overridden).
 * Returns undefined when no target is ours and the policy itself has no problem to report.
 */
export function policyStatus(policy: PolicyModel, targets: readonly ResolvedTarget[], tracker: OutcomeTracker, controllerName: string): ObjectStatus | undefined {
  const generation = policy.generation;
  const invalid = policy.problems.length > 0 ? policy.problems.join('; ') : undefined;
  if (targets.length === 0 && invalid === undefined) return undefined;
  const ancestors = targets.slice(0, MAX_ANCESTORS).map((target, i) => ({
    ancestorRef: target.ancestorRef,
    controllerName,
    conditions: ancestorConditions(policy, target, i, tracker, invalid, generation),
  }));
  const status: Record<string, unknown> = { ancestors };
  if (invalid !== undefined) status.conditions = [condition('Accepted', false, 'Invalid', invalid, generation)];
  return { apiVersion: policy.object.apiVersion, kind: policy.object.kind, metadata: { name: policy.object.metadata.name, namespace: policy.namespace }, status };
}

function ancestorConditions(policy: PolicyModel, target: ResolvedTarget, index: number, tracker: OutcomeTracker, invalid: string | undefined, generation: number | undefined): Condition[] {
  const rejected = (reason: string, message: string): Condition[] => [
    condition('Accepted', false, reason, message, generation),
    condition('Attached', false, reason, 'Policy is not in effect for this target', generation),
  ];
  if (target.problem) return rejected(target.problem.reason, target.problem.message);
  if (invalid !== undefined) {
    return [
      condition('Accepted', false, 'Invalid', invalid, generation),
      condition('Attached', false, 'Invalid', 'Policy is invalid; requests it would guard fail closed (500)', generation),
    ];
  }
  const accepts = new Set<Section>(target.points.flatMap((p) => p.sections));
  const applicable = sectionsOf(policy).filter((s) => accepts.has(s));
  if (applicable.length === 0) {
    const kind = String(target.ancestorRef.kind);
    return rejected('Invalid', `${sectionsOf(policy).join(' and ')} policy cannot target ${kind}${target.ancestorRef.sectionName !== undefined ? ' with sectionName' : ''}${target.ancestorRef.port !== undefined ? ' with port' : ''}`);
  }
  const { won, lost } = tracker.outcome(policy.source, index);
  const accepted = condition('Accepted', true, 'Accepted', 'Policy is accepted', generation);
  if (lost.size === 0) return [accepted, condition('Attached', true, 'Attached', 'Policy is attached', generation)];
  const beaten = [...lost].map(([member, l]) => `${member} by ${l.by}`).join(', ');
  if (won.size > 0) {
    return [accepted, condition('Attached', true, 'Merged', `Merged with other policies; in effect: ${[...won].sort().join(', ')}; overridden: ${beaten}`, generation)];
  }
  if ([...lost.values()].every((l) => l.sameLevel)) {
    return [
      condition('Accepted', false, 'Conflicted', `Conflicts with older policies at the same level, which win: ${beaten}`, generation),
      condition('Attached', false, 'Overridden', 'Policy is not in effect for this target', generation),
    ];
  }
  return [accepted, condition('Attached', false, 'Overridden', `Every member is overridden: ${beaten}`, generation)];
}
