/**
 * Virtual ProxyModels (SPEC.md, docs/models.md): `failover`, `weighted` and `conditional` over
 * other ProxyModels of the same namespace. Every target is its model's provider with the upstream
 * model pinned (the target's `model`, or the referenced model's exact match), named
 * `<virtual id>#<index>:<target name>` so health, metrics and policies tell targets apart.
 *
 * - failover: targets grouped by `priority` (lower first) — the `ai` picker's priority groups.
 * - weighted: `groups[i]` is target i; the proxy draws one per request in proportion to the
 *   weights (model-router.ts), the other targets with a weight following as failover.
 * - conditional: `groups[i]` is target i; the proxy takes the first whose `when` holds on the
 *   request (the fallback, without `when`, last). Each `when` is compiled here, once, so a bad
 *   expression is the model's `Accepted=False Invalid` and never a request's surprise.
 */
import type { KubeObject } from '../../api/gateway/object.ts';
import { compile } from '../../cel/index.ts';
import { parseModelPattern } from '../../common/model-match.ts';
import type { AiProviderIR, ModelChoiceIR, ModelRouteIR } from '../../ir/ai.ts';
import { isDict, listOf, type Dict } from './read.ts';
import { namespaceOf } from './snapshot.ts';
import type { Problem } from './status/conditions.ts';

/** Past this many targets a list is refused (the schema's max is 64). */
const MAX_TARGETS = 64;
/** A weight's bound (the schema's); weights are summed per request pick, so the sum stays exact. */
const MAX_WEIGHT = 1_000_000;

/** Lowers one target model (a ProxyModel with a provider) to the provider the virtual model sends to; undefined (with problems) when it cannot be served. */
export type LowerTarget = (target: KubeObject, name: string, pin: string, path: string) => AiProviderIR | undefined;

export interface LoweredVirtual {
  readonly groups: ModelRouteIR['groups'];
  readonly choice?: ModelChoiceIR;
}

export function lowerVirtual(virtual: Dict, id: string, namespace: string, models: readonly KubeObject[], problems: Problem[], lowerTarget: LowerTarget): LoweredVirtual | undefined {
  const kind = (['failover', 'weighted', 'conditional'] as const).find((k) => isDict(virtual[k]));
  if (!kind) {
    problems.push({ reason: 'Invalid', message: 'spec.virtualModel: one of failover, weighted or conditional is required' });
    return undefined;
  }
  const base = `spec.virtualModel.${kind}.targets`;
  const targets = listOf<Dict>((virtual[kind] as Dict).targets);
  if (targets.length === 0 || targets.length > MAX_TARGETS) {
    problems.push({ reason: 'Invalid', message: `${base}: 1..${MAX_TARGETS} targets` });
    return undefined;
  }
  const before = problems.length;
  const providers = targets.map((target, i) => resolveTarget(target, `${base}[${i}]`, id, i, namespace, models, problems, lowerTarget));
  const choice = kind === 'weighted' ? weightedChoice(targets, base, problems) : kind === 'conditional' ? conditionalChoice(targets, base, problems) : undefined;
  if (problems.length > before) return undefined;
  const served = providers as AiProviderIR[];
  if (kind !== 'failover') return { groups: served.map((p) => ({ providers: [p] })), ...(choice ? { choice } : {}) };
  const byPriority = new Map<number, AiProviderIR[]>();
  targets.forEach((target, i) => {
    const priority = typeof target.priority === 'number' ? target.priority : 0;
    byPriority.set(priority, [...(byPriority.get(priority) ?? []), served[i]]);
  });
  return { groups: [...byPriority.entries()].sort(([a], [b]) => a - b).map(([, group]) => ({ providers: group })) };
}

function resolveTarget(target: Dict, path: string, id: string, index: number, namespace: string, models: readonly KubeObject[], problems: Problem[], lowerTarget: LowerTarget): AiProviderIR | undefined {
  const refName = isDict(target.modelRef) && typeof target.modelRef.name === 'string' ? target.modelRef.name : '';
  const ref = models.find((m) => namespaceOf(m) === namespace && m.metadata.name === refName);
  if (!ref) {
    problems.push({ reason: 'ModelNotFound', message: `${path}.modelRef: ProxyModel ${namespace}/${refName} not found` });
    return undefined;
  }
  const refSpec = isDict(ref.spec) ? ref.spec : {};
  if (refSpec.virtualModel !== undefined) {
    problems.push({ reason: 'Invalid', message: `${path}.modelRef: ${refName} is a virtual model; a target is a model with a provider` });
    return undefined;
  }
  const refMatch = isDict(refSpec.match) && typeof refSpec.match.model === 'string' ? refSpec.match.model : undefined;
  const refPattern = parseModelPattern(refMatch, refName);
  const pin = typeof target.model === 'string' ? target.model : 'kind' in refPattern && refPattern.kind === 'exact' ? refPattern.name : undefined;
  if (pin === undefined) {
    problems.push({ reason: 'Invalid', message: `${path}.model: required, ${refName} matches a wildcard` });
    return undefined;
  }
  return lowerTarget(ref, `${id}#${index}:${refName}`, pin, `${path} (ProxyModel ${refName}) spec`);
}

/** Weights 0..MAX_WEIGHT (default 1), at least one above 0 (the schema says so too; the translator does not trust it). */
function weightedChoice(targets: readonly Dict[], base: string, problems: Problem[]): ModelChoiceIR | undefined {
  const weights = targets.map((t) => (t.weight === undefined ? 1 : t.weight));
  const bad = weights.findIndex((w) => typeof w !== 'number' || !Number.isInteger(w) || w < 0 || w > MAX_WEIGHT);
  if (bad >= 0) {
    problems.push({ reason: 'Invalid', message: `${base}[${bad}].weight: an integer 0..${MAX_WEIGHT}` });
    return undefined;
  }
  if (!weights.some((w) => (w as number) > 0)) {
    problems.push({ reason: 'Invalid', message: `${base}: at least one target must have a weight above 0` });
    return undefined;
  }
  return { kind: 'weighted', weights: weights as number[] };
}

/** Each `when` compiles to a bool (the CEL service's cost limit applies); one fallback at most, last. */
function conditionalChoice(targets: readonly Dict[], base: string, problems: Problem[]): ModelChoiceIR | undefined {
  const before = problems.length;
  const branches = targets.map((t, i): { when?: string } => {
    if (t.when === undefined) {
      if (i !== targets.length - 1) problems.push({ reason: 'Invalid', message: `${base}[${i}].when: only the last target may omit when (the fallback)` });
      return {};
    }
    if (typeof t.when !== 'string') {
      problems.push({ reason: 'Invalid', message: `${base}[${i}].when: a CEL expression` });
      return {};
    }
    const compiled = compile(t.when, { expect: ['bool'] });
    if (!compiled.ok) problems.push({ reason: 'Invalid', message: `${base}[${i}].when: invalid CEL expression: ${compiled.error.message}` });
    return { when: t.when };
  });
  return problems.length > before ? undefined : { kind: 'conditional', branches };
}
