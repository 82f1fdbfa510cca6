/**
 * One ProxyModel as the proxy serves it (docs/models.md), compiled once per config: the picker(s)
 * over its groups, how a weighted or conditional virtual model takes its target, and its own
 * `policies.authorization`. Only models that need the request's CEL input (a conditional choice,
 * an authorization rule) ask for it, so plain models and weighted splits build no activation.
 *
 * - weighted: target i is drawn with probability weight_i / Σ weights; the request then tries
 *   target i first and, should it fail before anything reached the client, the other targets with
 *   a weight above 0, heaviest first (one picker per target, made here). A weight-0 target never
 *   receives a request.
 * - conditional: the first target whose `when` is true on the request; the fallback (no `when`)
 *   last. An expression that fails (a missing header read as a map key, a cost over the limit) is
 *   false, as for every condition (src/cel/failure.ts). No match and no fallback: no target.
 * - authorization: SPEC.md's rule semantics through `authorize()`. A rule that does not compile
 *   (the translator checked it, so only a CEL environment change could) denies every request.
 */
import { authorize, compile, conditionHolds, createActivation, type Activation, type AuthorizationRule, type CelInput, type Program } from '../../../cel/index.ts';
import type { ModelRouteIR } from '../../../ir/ai.ts';
import { ProviderPicker } from './picker.ts';
import type { ProviderHealth } from './provider-health.ts';

export type ModelPick =
  | { readonly kind: 'picked'; readonly picker: ProviderPicker }
  /** The model's authorization refused the request. */
  | { readonly kind: 'denied' }
  /** A conditional model none of whose conditions held, without a fallback. */
  | { readonly kind: 'no-target' };

/** The request's CEL input, asked for only by models that evaluate something. */
export type CelInputSource = () => CelInput;

export class CompiledModel {
  readonly route: ModelRouteIR;
  readonly #pick: (activation: () => Activation) => ProviderPicker | undefined;
  readonly #rules: readonly AuthorizationRule[] | undefined;
  /** Whether `choose` reads the request (a conditional choice or an authorization rule). */
  readonly needsInput: boolean;

  /** `random` draws weighted targets (tests pass a seeded one). */
  constructor(route: ModelRouteIR, health: ProviderHealth | undefined, random: () => number = Math.random) {
    this.route = route;
    this.#rules = route.authorization ? compileRules(route.authorization.rules) : undefined;
    const choice = route.choice;
    if (choice?.kind === 'weighted') this.#pick = weightedPick(route, choice.weights, health, random);
    else if (choice?.kind === 'conditional') this.#pick = conditionalPick(route, choice.branches, health);
    else {
      const picker = new ProviderPicker(route.groups, health);
      this.#pick = () => picker;
    }
    this.needsInput = this.#rules !== undefined || choice?.kind === 'conditional';
  }

  /** The picker for one request naming this model; `input` is read at most once, and only when needed. */
  choose(model: string, input: CelInputSource | undefined): ModelPick {
    // Plain models and weighted splits: no closure, no activation.
    if (!this.needsInput) return this.#picked(this.#pick(NO_ACTIVATION));
    let activation: Activation | undefined;
    const activationOf = (): Activation => {
      // Without a request's input (a handler driven outside a gateway) nothing can be checked: an empty request.
      activation ??= createActivation({ ...(input ? input() : { request: { method: 'POST', url: '/', headers: {} } }), llm: { provider: this.route.id, requestModel: model } });
      return activation;
    };
    if (this.#rules && !authorize(this.#rules, activationOf()).allowed) return { kind: 'denied' };
    return this.#picked(this.#pick(activationOf));
  }

  #picked(picker: ProviderPicker | undefined): ModelPick {
    return picker ? { kind: 'picked', picker } : NO_TARGET;
  }
}

const NO_TARGET: ModelPick = Object.freeze({ kind: 'no-target' });
/** Handed to pickers that never evaluate anything. */
const NO_ACTIVATION = (): Activation => {
  throw new Error('a model that evaluates nothing asked for the request\'s CEL input');
};

/** A rule whose expression does not compile becomes a Require that never holds: every request is denied (fail closed). */
function compileRules(rules: NonNullable<ModelRouteIR['authorization']>['rules']): AuthorizationRule[] {
  return rules.map((rule) => {
    const programs: Program[] = [];
    for (const expression of rule.matchExpressions) {
      const compiled = compile(expression, { expect: ['bool'] });
      if (!compiled.ok) return { action: 'Require', matchExpressions: [NEVER] };
      programs.push(compiled.program);
    }
    return { action: rule.action, matchExpressions: programs };
  });
}

const NEVER = (() => {
  const compiled = compile('false', { expect: ['bool'] });
  if (!compiled.ok) throw new Error('the CEL literal false does not compile');
  return compiled.program;
})();

function weightedPick(route: ModelRouteIR, weights: readonly number[], health: ProviderHealth | undefined, random: () => number): () => ProviderPicker | undefined {
  const drawable = weights.map((w, i) => ({ w, i })).filter(({ w, i }) => w > 0 && route.groups[i] !== undefined);
  if (drawable.length === 0) return () => undefined;
  // Failover order after the drawn target: the other drawable targets, heaviest first (ties in written order).
  const byWeight = [...drawable].sort((a, b) => b.w - a.w || a.i - b.i);
  const pickers = drawable.map(({ i }) => new ProviderPicker([route.groups[i], ...byWeight.filter((d) => d.i !== i).map((d) => route.groups[d.i])], health));
  const total = drawable.reduce((sum, d) => sum + d.w, 0);
  // Cumulative bounds, so a draw is one scan of at most 64 numbers and no allocation.
  const bounds: number[] = [];
  let running = 0;
  for (const d of drawable) bounds.push((running += d.w));
  return () => {
    const x = random() * total;
    for (let k = 0; k < bounds.length; k++) if (x < bounds[k]) return pickers[k];
    return pickers[pickers.length - 1];
  };
}

function conditionalPick(route: ModelRouteIR, branches: readonly { readonly when?: string }[], health: ProviderHealth | undefined): (activation: () => Activation) => ProviderPicker | undefined {
  const compiled = branches.map((branch, i) => {
    const picker = route.groups[i] ? new ProviderPicker([route.groups[i]], health) : undefined;
    if (branch.when === undefined) return { program: undefined, picker };
    const result = compile(branch.when, { expect: ['bool'] });
    // An expression that does not compile never holds (its branch is never taken), like one that fails.
    return { program: result.ok ? result.program : NEVER, picker };
  });
  return (activation) => {
    for (const branch of compiled) {
      if (!branch.picker) continue;
      if (branch.program === undefined || conditionHolds(branch.program, activation())) return branch.picker;
    }
    return undefined;
  };
}
