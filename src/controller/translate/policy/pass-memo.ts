import type { KubeObject, ObjectStatus } from '../../../api/gateway/object.ts';
import type { BackendResolver } from '../backend.ts';
import type { SecretLedger } from '../secret-ledger.ts';
import type { BackendKind } from '../status/not-applied.ts';
import type { OutcomeTracker } from './merge.ts';
import type { PolicyModel } from './model.ts';
import type { ResolvedTarget } from './targets.ts';

/**
 * What the policy pass keeps between translations of a changing object set (issue 15), so that
 * a route edit does not read, lower and write the status of all 1,000 ProxyPolicies again.
 *
 * Reads: a ProxyPolicy's model depends on the object, its age order and the world it reads
 * (Secrets, ConfigMaps, Services, EndpointSlices, ReferenceGrants, ProxyBackends) — never on
 * routes or other policies. It is kept per (object, order) while only HTTPRoutes and
 * ProxyPolicies change; the owner calls `clearReads()` otherwise. A read that touched the Secret
 * ledger or resolved a backend reference is not kept: the ledger must see every read again, and
 * the resolver must collect the backends it names on every translation.
 *
 * Statuses: a policy's status (policyStatus + withNotApplied) depends on its model, its
 * resolved targets, the merge outcome per target and the backend kinds each target reaches.
 * It is kept per model object with a signature of the rest; an equal signature returns the same
 * status object (the status writer, the change detection and the secret scrub key on identity).
 */
export class PolicyPassMemo {
  #reads = new WeakMap<KubeObject, { readonly order: number; readonly model: PolicyModel }>();
  #statuses = new WeakMap<PolicyModel, { readonly signature: string; readonly status: ObjectStatus | undefined }>();

  clearReads(): void {
    this.#reads = new WeakMap();
  }

  read(object: KubeObject, order: number, ledger: SecretLedger, resolver: BackendResolver, readPolicy: () => PolicyModel): PolicyModel {
    const kept = this.#reads.get(object);
    if (kept && kept.order === order) return kept.model;
    const [touches, resolves] = [ledger.touches, resolver.resolves];
    const model = readPolicy();
    if (ledger.touches === touches && resolver.resolves === resolves) this.#reads.set(object, { order, model });
    else this.#reads.delete(object);
    return model;
  }

  status(model: PolicyModel, signature: string, build: () => ObjectStatus | undefined): ObjectStatus | undefined {
    const kept = this.#statuses.get(model);
    if (kept && kept.signature === signature) return kept.status;
    const status = build();
    this.#statuses.set(model, { signature, status });
    return status;
  }
}

/**
 * Everything a policy's status reads besides its model: per target, the reference, its problem,
 * the points it attaches at, the merge outcome through it and the backend kinds it reaches.
 */
export function statusSignature(model: PolicyModel, targets: readonly ResolvedTarget[], tracker: OutcomeTracker, kindsOf: (target: ResolvedTarget) => ReadonlySet<BackendKind>, controllerName: string): string {
  let out = controllerName;
  for (let i = 0; i < targets.length; i++) {
    const target = targets[i] as ResolvedTarget;
    out += `\n${JSON.stringify(target.ancestorRef)}|${target.problem ? `${target.problem.reason}:${target.problem.message}` : ''}|`;
    for (const p of target.points) out += `${p.key}@${p.level}[${p.sections.join(',')}] `;
    const { won, lost } = tracker.outcome(model.source, i);
    out += `|${[...won].join(',')}|`;
    for (const [member, l] of lost) out += `${member}>${l.by}/${l.sameLevel ? 1 : 0},`;
    out += `|${[...kindsOf(target)].sort().join(',')}`;
  }
  return out;
}
