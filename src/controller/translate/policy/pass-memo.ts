import type { KubeObject, ObjectStatus } from '../../../api/gateway/object.ts';
import type { BackendResolver } from '../backend.ts';
import type { LedgerRecord, SecretLedger } from '../secret-ledger.ts';
import type { BackendKind } from '../status/not-applied.ts';
import type { OutcomeTracker } from './merge.ts';
import type { PolicyModel } from './model.ts';
import type { ResolvedTarget } from './targets.ts';
import type { AttachmentIndex } from './places.ts';
import { GATEWAY_GROUP } from '../../../api/gateway/index.ts';
import { sameJson } from '../same-json.ts';
import { namespaceOf } from '../snapshot.ts';

/** One policy's model and resolved targets. */
export interface Resolved {
  readonly policy: PolicyModel;
  readonly targets: readonly ResolvedTarget[];
}

/**
 * What the policy pass keeps between translations of a changing object set (issue 15), so that
 * a route edit does not read, lower and write the status of all 1,000 ProxyPolicies again.
 *
 * Reads: a ProxyPolicy's model depends on the object, its age order and the world it reads
 * (Secrets, ConfigMaps, Services, EndpointSlices, ReferenceGrants, ProxyBackends) — never on
 * routes or other policies. It is kept per (object, order) while only HTTPRoutes and
 * ProxyPolicies change; the owner calls `clearReads()` otherwise. A read that resolved a backend
 * reference is not kept (the resolver must collect the backends it names on every translation);
 * one that read Secret data is kept with what it recorded in the Secret ledger, which is recorded
 * again in each later translation's ledger (SecretLedger.capture/replay).
 *
 * Statuses: a policy's status (policyStatus + withNotApplied) depends on its model, its
 * resolved targets, the merge outcome per target and the backend kinds each target reaches.
 * It is kept per model object with a signature of the rest; an equal signature returns the same
 * status object (the status writer, the change detection and the secret scrub key on identity).
 */
export class PolicyPassMemo {
  #reads = new WeakMap<KubeObject, { readonly order: number; readonly model: PolicyModel; readonly recorded: LedgerRecord | undefined }>();
  /**
   * Statuses per policy object, with the model and the reads epoch they were built in: a model
   * read again from the same object in the same epoch (a read that resolves a backend is never
   * kept, so such a policy gets a new model on every translation) has the same content — reads
   * depend only on the object, its order and the world, which changes only with a new epoch.
   */
  #statuses = new WeakMap<KubeObject, { readonly model: PolicyModel; readonly order: number; readonly epoch: number; readonly signature: string; readonly status: ObjectStatus | undefined }>();
  /** Bumped by clearReads(): what was read before may read differently now. */
  #epoch = 0;
  #targets = new WeakMap<KubeObject, { readonly targets: readonly ResolvedTarget[]; readonly routes: readonly (readonly [string, KubeObject])[] }>();
  /** The previous pass's models in order, their targets and the attachment index built from them. */
  /** The previous pass's tracker calls from the policy endpoints' connection policies. */
  #endpointCalls: unknown;
  #last: { readonly models: readonly PolicyModel[]; readonly targets: readonly (readonly ResolvedTarget[])[]; readonly index: AttachmentIndex } | undefined;

  /** The previous pass's policy list and what it resolved from it, for resolveAll(). */
  #loop: { readonly objects: readonly KubeObject[]; readonly resolved: readonly Resolved[]; readonly again: ReadonlySet<number>; readonly recording: readonly number[]; readonly byRoute: ReadonlyMap<string, readonly number[]>; readonly namespaces: readonly string[] } | undefined;

  clearReads(): void {
    this.#epoch++;
    this.#loop = undefined;
    this.#reads = new WeakMap();
    this.#targets = new WeakMap();
    this.#last = undefined;
    this.#endpointCalls = undefined;
  }

  /**
   * A policy's resolved targets, kept per policy object (its targetRefs and namespace; a model read
   * anew from the same object, as one that resolves a backend is, finds them too). They read the graph and the snapshot's Services and ProxyBackends
   * (unchanged while only routes and policies change: `clearReads()` otherwise) and, for an HTTPRoute
   * target, our route of that name: kept per model while each such route is the same object. Not
   * kept when a target selects routes by label or names a route that is not ours (its answer reads
   * every route). Targets equal to the kept ones are given as the kept array, so an unchanged pass
   * can be recognised by identity (`sameIndex`).
   */
  targets(model: PolicyModel, ourRoutes: ReadonlyMap<string, KubeObject>, resolve: () => ResolvedTarget[]): readonly ResolvedTarget[] {
    const kept = this.#targets.get(model.object);
    if (kept !== undefined && kept.routes.every(([id, route]) => ourRoutes.get(id) === route)) return kept.targets;
    const fresh = resolve();
    const routes: (readonly [string, KubeObject])[] = [];
    for (const target of model.targets) {
      if (target.group !== GATEWAY_GROUP || target.kind !== 'HTTPRoute') continue;
      const route = target.name === undefined ? undefined : ourRoutes.get(`${model.namespace}/${target.name}`);
      if (route === undefined) {
        this.#targets.delete(model.object);
        return fresh;
      }
      routes.push([`${model.namespace}/${target.name as string}`, route]);
    }
    const targets = kept !== undefined && sameJson(kept.targets, fresh) ? kept.targets : fresh;
    this.#targets.set(model.object, { targets, routes });
    return targets;
  }

  /**
   * When this pass has as many policies as the previous one: the models whose policy object or
   * targets array differ from the one at their place then (their attachments may differ; the
   * others' are as AttachmentIndex.changedSince compares them), and, when none does and every
   * model is the same object, the previous pass's index. Undefined when the count changed.
   * `remember` records this pass (undefined: a pass that made no index, after which nothing is reused).
   */
  samePass(models: readonly PolicyModel[], targets: readonly (readonly ResolvedTarget[])[]): { readonly changed: ReadonlySet<PolicyModel>; readonly index: AttachmentIndex | undefined } | undefined {
    const last = this.#last;
    if (last === undefined || last.models.length !== models.length) return undefined;
    const changed = new Set<PolicyModel>();
    let sameModels = true;
    for (let i = 0; i < models.length; i++) {
      const model = models[i] as PolicyModel;
      const was = last.models[i] as PolicyModel;
      if (model.object !== was.object || targets[i] !== last.targets[i]) changed.add(model);
      sameModels &&= model === was;
    }
    return { changed, index: sameModels && changed.size === 0 ? last.index : undefined };
  }

  remember(pass: { readonly models: readonly PolicyModel[]; readonly targets: readonly (readonly ResolvedTarget[])[]; readonly index: AttachmentIndex } | undefined): void {
    this.#last = pass;
    if (pass === undefined) this.#endpointCalls = undefined;
  }

  /** Whether the policy endpoints' tracker calls (withEndpointConnections) are the previous pass's; records these. */
  sameEndpointCalls(calls: unknown): boolean {
    const same = this.#endpointCalls !== undefined && sameJson(this.#endpointCalls, calls);
    this.#endpointCalls = calls;
    return same;
  }

  /**
   * Every policy's model and targets, in order (`one` reads and resolves one). When the list has
   * the previous pass's objects at the same places except a few replaced by objects of the same
   * namespace, and the routes whose `<ns>/<name>` changed since are known (`changedRoutes`, from the
   * route loop's patch), only these positions are resolved again: the replaced ones, those whose
   * read or targets are not kept (a backend resolved; a route selector or a route that is not
   * ours), and those naming a changed route. The rest are last pass's (the same read and targets
   * `one` would return). `prime` is given the namespaces in the order a full pass first meets them
   * (the backend resolvers are created in that order).
   */
  resolveAll(objects: readonly KubeObject[], changedRoutes: readonly string[] | undefined, ledger: SecretLedger, one: (object: KubeObject, order: number) => Resolved, prime: (namespace: string) => void): Resolved[] {
    const last = this.#loop;
    let positions: number[] | undefined;
    if (last !== undefined && changedRoutes !== undefined && last.objects.length === objects.length) {
      const again = new Set(last.again);
      for (const id of changedRoutes) for (const i of last.byRoute.get(id) ?? []) again.add(i);
      let fits = true;
      for (let i = 0; i < objects.length; i++) {
        const now = objects[i] as KubeObject;
        const was = last.objects[i] as KubeObject;
        if (now === was) continue;
        if (namespaceOf(now) !== namespaceOf(was)) {
          fits = false;
          break;
        }
        again.add(i);
      }
      if (fits) positions = [...again].sort((a, b) => a - b);
    }
    let resolved: Resolved[];
    if (last !== undefined && positions !== undefined) {
      for (const namespace of last.namespaces) prime(namespace);
      resolved = last.resolved.slice();
      // In position order, as a full pass reads them: a kept read that recorded Secret data records it again.
      const again = new Set(positions);
      for (const i of [...new Set([...positions, ...last.recording])].sort((a, b) => a - b)) {
        if (again.has(i)) resolved[i] = one(objects[i] as KubeObject, i);
        else ledger.replay(this.#recordedOf(objects[i] as KubeObject) as LedgerRecord);
      }
    } else {
      resolved = objects.map((object, order) => one(object, order));
    }
    this.#remember(objects, resolved);
    return resolved;
  }

  #remember(objects: readonly KubeObject[], resolved: readonly Resolved[]): void {
    const again = new Set<number>();
    const recording: number[] = [];
    const byRoute = new Map<string, number[]>();
    const namespaces = new Set<string>();
    for (let i = 0; i < resolved.length; i++) {
      const { policy } = resolved[i] as Resolved;
      namespaces.add(namespaceOf(objects[i] as KubeObject));
      const kept = this.#targets.get(policy.object);
      const read = this.#reads.get(policy.object);
      if (read?.model !== policy || kept === undefined) {
        again.add(i);
        continue;
      }
      if (read.recorded) recording.push(i);
      for (const [id] of kept.routes) {
        const list = byRoute.get(id);
        if (list) list.push(i);
        else byRoute.set(id, [i]);
      }
    }
    this.#loop = { objects: objects.slice(), resolved, again, recording, byRoute, namespaces: [...namespaces] };
  }

  /** The status last built or kept for `model` (a pass that changed nothing it reads gives it again). */
  keptStatus(model: PolicyModel): { readonly status: ObjectStatus | undefined } | undefined {
    return this.#keptFor(model);
  }

  read(object: KubeObject, order: number, ledger: SecretLedger, resolver: BackendResolver, readPolicy: () => PolicyModel): PolicyModel {
    const kept = this.#reads.get(object);
    if (kept && kept.order === order) {
      // What the read recorded from Secrets goes into this translation's ledger as a fresh read would put it.
      if (kept.recorded) ledger.replay(kept.recorded);
      return kept.model;
    }
    const resolves = resolver.resolves;
    const { result: model, recorded } = ledger.capture(readPolicy);
    if (resolver.resolves === resolves) this.#reads.set(object, { order, model, recorded });
    else this.#reads.delete(object);
    return model;
  }

  /** A kept read's ledger record (resolveAll replays it for a policy it does not read again). */
  #recordedOf(object: KubeObject): LedgerRecord | undefined {
    return this.#reads.get(object)?.recorded;
  }

  status(model: PolicyModel, signature: string, build: () => ObjectStatus | undefined): ObjectStatus | undefined {
    const kept = this.#keptFor(model);
    if (kept && kept.signature === signature) return kept.status;
    const status = build();
    this.#statuses.set(model.object, { model, order: model.order, epoch: this.#epoch, signature, status });
    return status;
  }

  /** The kept status of `model`, or of an equal model: read from the same object, at the same order, in the same epoch. */
  #keptFor(model: PolicyModel): { readonly signature: string; readonly status: ObjectStatus | undefined } | undefined {
    const kept = this.#statuses.get(model.object);
    return kept !== undefined && (kept.model === model || (kept.epoch === this.#epoch && kept.order === model.order)) ? kept : undefined;
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
