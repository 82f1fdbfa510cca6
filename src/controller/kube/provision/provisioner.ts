/**
 * Provisioning (issue 16; docs/kubernetes.md "Provisioning"): the leader keeps, for every Gateway
 * of our GatewayClasses, the proxy workload objects.ts computes from its ProxyParameters.
 *
 * Each object is written by server-side apply (field manager `switchboard-provisioner`, force:
 * the controller owns what it generates), and only when what it would apply differs from what it
 * last applied — a snapshot that changes nothing for a Gateway sends nothing. Every object carries
 * an owner reference to its Gateway, so deleting the Gateway has the API server's garbage
 * collector delete them. An object the controller applied earlier and no longer wants for a
 * Gateway that still exists (a PodDisruptionBudget taken out of the parameters, a Deployment after
 * switching to a DaemonSet) is deleted here.
 *
 * A Gateway whose parameters are missing or invalid is left as it is (nothing new is applied, what
 * runs keeps running) and the problem is logged once per distinct message.
 */
import type { KubeObject, ObjectStatus, SourcedObject } from '../../../api/gateway/object.ts';
import type { Logger } from '../../../common/logger.ts';
import type { ObjectSource, SourceSnapshot } from '../../sources/types.ts';
import { KubeApiError, type KubeClient } from '../client.ts';
import { deltaTouches } from '../kube-source.ts';
import { FIELD_MANAGER, provisionObjects, type ProvisionContext } from './objects.ts';
import { attachedListenerSets } from './listener-sets.ts';
import { resolveParameters } from './parameters.ts';
import { overlayProvisionStatus, parametersVerdicts, type ProvisionVerdicts } from './status.ts';
import type { JsonMap } from './strategic-merge.ts';

const GATEWAY_GROUP = 'gateway.networking.k8s.io';
const DEFAULT_RETRY_MS = 10_000;

/** REST plural of each kind provisioning writes. */
const PLURALS: Readonly<Record<string, string>> = {
  ConfigMap: 'configmaps',
  ServiceAccount: 'serviceaccounts',
  Service: 'services',
  Deployment: 'deployments',
  DaemonSet: 'daemonsets',
  PodDisruptionBudget: 'poddisruptionbudgets',
  HorizontalPodAutoscaler: 'horizontalpodautoscalers',
};

export interface ProvisionerOptions extends ProvisionContext {
  readonly client: KubeClient;
  readonly logger: Logger;
  readonly controllerName: string;
  readonly isLeader: () => boolean;
  readonly retryMs?: number;
  /** The Secret (`ca.crt`) holding the CA proxies verify the controller with; watched like any Secret. */
  readonly caSecret?: { readonly namespace: string; readonly name: string };
  /** Called when the statuses provisioning overlays change (the status writer refreshes). */
  readonly onStatusChange?: () => void;
  /** The chart's `inferenceExtension.enabled` (context.ts). */
  readonly inferenceExtension?: boolean;
}

interface DesiredState {
  readonly desired: Map<string, Desired>;
  readonly gateways: Set<string>;
  readonly held: Set<string>;
  readonly problems: Map<string, string>;
}

interface Desired {
  readonly gateway: string;
  readonly body: JsonMap;
  readonly text: string;
}

/** The kinds the desired state and verdicts read (#computeDesired, #controllerCa, parametersVerdicts with its ConfigMaps, attachedListenerSets). */
const PROVISION_INPUTS: ReadonlySet<string> = new Set(['GatewayClass', 'Gateway', 'ProxyParameters', 'ListenerSet', 'XListenerSet', 'Namespace', 'Secret', 'ConfigMap']);

export class Provisioner {
  readonly #options: ProvisionerOptions;
  #objects: readonly SourcedObject[] = [];
  /** Object path → the JSON last applied there, and the Gateway (`ns/name`) it belongs to. */
  readonly #applied = new Map<string, { readonly gateway: string; readonly text: string }>();
  readonly #reported = new Set<string>();
  #running = false;
  #again = false;
  #retry: NodeJS.Timeout | undefined;
  #closed = false;
  #cached: { readonly objects: readonly SourcedObject[]; readonly state: DesiredState } | undefined;
  #verdicts: ProvisionVerdicts = { parameters: new Map(), gateways: new Map() };
  #verdictsText = '';

  constructor(options: ProvisionerOptions) {
    this.#options = options;
    // Said once at start rather than ignored: InferencePool backendRefs stay refused on their routes.
    if (options.inferenceExtension) options.logger.warn('inferenceExtension.enabled is set, but this version has no inference-extension routing: InferencePool backendRefs are refused on their routes (docs/chart.md)');
  }

  /** The source with this reconciler fed each snapshot it delivers. */
  tap(source: ObjectSource): ObjectSource {
    return {
      start: (onSnapshot) => source.start((snapshot: SourceSnapshot) => {
        if (deltaTouches(snapshot, PROVISION_INPUTS)) this.observe(snapshot.objects);
        else this.#carry(snapshot.objects);
        onSnapshot(snapshot);
      }),
      stop: async () => {
        this.close();
        await source.stop();
      },
    };
  }

  /**
   * A snapshot that changed none of the kinds provisioning reads (a route edit): the desired
   * state and verdicts computed from the previous one stand, without a pass over every object.
   */
  #carry(objects: readonly SourcedObject[]): void {
    const cached = this.#cached?.objects === this.#objects ? this.#cached : undefined;
    this.#objects = objects;
    if (cached) this.#cached = { objects, state: cached.state };
  }

  observe(objects: readonly SourcedObject[]): void {
    this.#objects = objects;
    this.#updateVerdicts();
    this.reconcile();
  }

  /** The translated statuses with ProxyParameters' and Gateways' provisioning conditions (status.ts). */
  overlayStatus(statuses: readonly ObjectStatus[]): readonly ObjectStatus[] {
    return overlayProvisionStatus(statuses, this.#verdicts);
  }

  /** On every replica (any of them may become the leader and write status). */
  #updateVerdicts(): void {
    const { problems } = this.#desired();
    const verdicts = { parameters: parametersVerdicts(this.#objects.map((o) => o.object)), gateways: problems };
    const text = JSON.stringify([[...verdicts.parameters], [...verdicts.gateways]]);
    this.#verdicts = verdicts;
    if (text === this.#verdictsText) return;
    this.#verdictsText = text;
    this.#options.onStatusChange?.();
  }

  /** A new leader applies everything once: the previous one may have stopped mid-way. */
  resync(): void {
    this.#applied.clear();
    this.reconcile();
  }

  reconcile(): void {
    if (this.#closed || !this.#options.isLeader()) return;
    if (this.#running) {
      this.#again = true;
      return;
    }
    this.#running = true;
    void this.#run().finally(() => {
      this.#running = false;
      if (this.#again) {
        this.#again = false;
        this.reconcile();
      }
    });
  }

  close(): void {
    this.#closed = true;
    clearTimeout(this.#retry);
  }

  /** Whether every wanted object has been applied as it is now wanted (tests wait on it). */
  settled(): boolean {
    const { desired } = this.#desired();
    return !this.#running && [...desired].every(([path, d]) => this.#applied.get(path)?.text === d.text);
  }

  async #run(): Promise<void> {
    const { desired, gateways, held } = this.#desired();
    let failed = false;
    for (const [path, want] of desired) {
      if (this.#closed || !this.#options.isLeader()) return;
      if (this.#applied.get(path)?.text === want.text) continue;
      try {
        await this.#options.client.request('PATCH', path, { body: want.body, contentType: 'application/apply-patch+yaml', query: { fieldManager: FIELD_MANAGER, force: 'true' } });
        this.#applied.set(path, { gateway: want.gateway, text: want.text });
        this.#options.logger.info({ gateway: want.gateway, object: `${String(want.body.kind)} ${path}` }, 'applied a proxy workload object');
      } catch (err) {
        failed = true;
        this.#applied.delete(path);
        this.#options.logger.warn({ gateway: want.gateway, object: path, err: (err as Error).message }, 'could not apply a proxy workload object; retrying');
      }
    }
    for (const [path, was] of [...this.#applied]) {
      if (desired.has(path) || held.has(was.gateway)) continue;
      // A deleted Gateway's objects go with it (owner references); only still-existing Gateways' leftovers are deleted here.
      if (!gateways.has(was.gateway)) {
        this.#applied.delete(path);
        continue;
      }
      try {
        await this.#options.client.request('DELETE', path);
        this.#applied.delete(path);
      } catch (err) {
        if (err instanceof KubeApiError && err.statusCode === 404) this.#applied.delete(path);
        else {
          failed = true;
          this.#options.logger.warn({ gateway: was.gateway, object: path, err: (err as Error).message }, 'could not delete a proxy workload object no longer wanted; retrying');
        }
      }
    }
    if (failed) this.#scheduleRetry();
  }

  /** What the last snapshot asks for; `held`: Gateways whose parameters are unusable (left as they are). */
  /** Computed once per snapshot (observe, reconcile and settled all read it). */
  #desired(): DesiredState {
    if (this.#cached?.objects !== this.#objects) this.#cached = { objects: this.#objects, state: this.#computeDesired() };
    return this.#cached.state;
  }

  #computeDesired(): DesiredState {
    const classes = new Map<string, KubeObject>();
    const parameters = new Map<string, KubeObject>();
    for (const { object } of this.#objects) {
      if (object.kind === 'GatewayClass' && object.apiVersion.startsWith(`${GATEWAY_GROUP}/`) && (object.spec as { controllerName?: unknown } | undefined)?.controllerName === this.#options.controllerName) classes.set(object.metadata.name, object);
      if (object.kind === 'ProxyParameters') parameters.set(`${object.metadata.namespace ?? 'default'}/${object.metadata.name}`, object);
    }
    // Only what ListenerSet attachment reads, so each Gateway scans a short list.
    const listenerObjects = this.#objects.map(({ object }) => object).filter((o) => o.kind === 'ListenerSet' || o.kind === 'XListenerSet' || o.kind === 'Namespace');
    const ca = this.#controllerCa();
    const context = { ...this.#options, ...(typeof ca === 'string' ? { controllerCaPem: ca } : {}) };
    const desired = new Map<string, Desired>();
    const gateways = new Set<string>();
    const held = new Set<string>();
    const problems = new Map<string, string>();
    for (const { object: gateway } of this.#objects) {
      if (gateway.kind !== 'Gateway' || !gateway.apiVersion.startsWith(`${GATEWAY_GROUP}/`)) continue;
      const gatewayClass = classes.get(String((gateway.spec as { gatewayClassName?: unknown } | undefined)?.gatewayClassName));
      if (!gatewayClass || !gateway.metadata.uid) continue;
      const id = `${gateway.metadata.namespace ?? 'default'}/${gateway.metadata.name}`;
      gateways.add(id);
      const resolved = resolveParameters(gatewayClass, gateway, parameters);
      let objects: JsonMap[];
      try {
        if (!resolved.ok) throw new Error(resolved.message);
        // Without the CA its proxies could not verify the controller: nothing is applied (fail closed).
        if (ca instanceof Error) throw ca;
        objects = provisionObjects(gateway, resolved.parameters, context, attachedListenerSets(gateway, listenerObjects));
      } catch (err) {
        held.add(id);
        problems.set(id, (err as Error).message);
        this.#reportOnce(id, (err as Error).message);
        continue;
      }
      for (const body of objects) {
        const meta = body.metadata as { name: string; namespace: string };
        desired.set(objectPath(String(body.apiVersion), String(body.kind), meta.namespace, meta.name), { gateway: id, body, text: JSON.stringify(body) });
      }
    }
    return { desired, gateways, held, problems };
  }

  /** The controller's CA from the watched Secret; undefined when none is configured. */
  #controllerCa(): string | Error | undefined {
    const ref = this.#options.caSecret;
    if (!ref) return undefined;
    const secret = this.#objects.find(({ object }) => object.kind === 'Secret' && object.apiVersion === 'v1' && object.metadata.name === ref.name && (object.metadata.namespace ?? 'default') === ref.namespace)?.object;
    const encoded = secret?.data?.['ca.crt'];
    if (typeof encoded !== 'string' || encoded === '') return new Error(`the controller's CA Secret ${ref.namespace}/${ref.name} (entry ca.crt) is not visible to the controller: proxies could not verify it`);
    return Buffer.from(encoded, 'base64').toString('utf8');
  }

  #reportOnce(gateway: string, message: string): void {
    const key = `${gateway}\n${message}`;
    if (this.#reported.has(key)) return;
    this.#reported.add(key);
    this.#options.logger.warn({ gateway, err: message }, 'the Gateway\'s proxy workload is not provisioned (what runs is left as it is)');
  }

  #scheduleRetry(): void {
    if (this.#closed || this.#retry !== undefined) return;
    this.#retry = setTimeout(() => {
      this.#retry = undefined;
      this.reconcile();
    }, this.#options.retryMs ?? DEFAULT_RETRY_MS);
    this.#retry.unref();
  }
}

export function objectPath(apiVersion: string, kind: string, namespace: string, name: string): string {
  const plural = PLURALS[kind];
  if (!plural) throw new Error(`provisioning does not write ${kind}`);
  return `${apiVersion.includes('/') ? '/apis' : '/api'}/${apiVersion}/namespaces/${encodeURIComponent(namespace)}/${plural}/${encodeURIComponent(name)}`;
}
