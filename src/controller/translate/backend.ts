import { CORE_GROUP, GATEWAY_GROUP, SWITCHBOARD_GROUP, type BackendObjectReference, type ServicePort } from '../../api/gateway/index.ts';
import type { KubeObject } from '../../api/gateway/object.ts';
import type { Backend } from '../../ir/types.ts';
import { serviceEndpoints } from './endpoints.ts';
import { translateProxyBackend } from './proxy-backend.ts';
import { isProxyModelRef, modelsBackend, ruleProblem, type ModelRuleContext } from './proxy-model.ts';
import { isDict, isPort, listOf } from './read.ts';
import { referencePermitted } from './refs.ts';
import type { Snapshot } from './snapshot.ts';
import type { Problem } from './status/conditions.ts';

export interface BackendResolution {
  readonly backendKey: string | null;
  readonly problem?: Problem;
}

/**
 * Resolves a route's backendRefs into IR backend keys, collecting the Backend objects they name.
 * One resolver per route, so a route's backends are only published when the route is.
 */
export class BackendResolver {
  readonly backends = new Map<string, Backend>();
  readonly #snapshot: Snapshot;
  readonly #routeNamespace: string;
  readonly #referrer: { readonly group: string; readonly kind: string };
  #resolves = 0;

  /** `referrer` is the kind whose references these are (ReferenceGrants name it); HTTPRoute unless a policy refers. */
  constructor(snapshot: Snapshot, routeNamespace: string, referrer: { readonly group: string; readonly kind: string } = { group: GATEWAY_GROUP, kind: 'HTTPRoute' }) {
    this.#snapshot = snapshot;
    this.#routeNamespace = routeNamespace;
    this.#referrer = referrer;
  }

  /** How many references were resolved so far: a kept policy read must not have resolved any (policy/pass-memo.ts). */
  get resolves(): number {
    return this.#resolves;
  }

  /** `rule`: the route rule holding `ref` (only a rule's own backendRefs may name ProxyModels). */
  resolve(ref: BackendObjectReference, path: string, rule?: ModelRuleContext): BackendResolution {
    this.#resolves++;
    if (isProxyModelRef(ref)) return this.#models(ref, path, rule);
    const group = ref.group ?? CORE_GROUP;
    const kind = ref.kind ?? 'Service';
    const name = String(ref.name);
    const namespace = typeof ref.namespace === 'string' && ref.namespace ? ref.namespace : this.#routeNamespace;
    const isService = group === CORE_GROUP && kind === 'Service';
    const isProxyBackend = group === SWITCHBOARD_GROUP && kind === 'ProxyBackend';
    if (!isService && !isProxyBackend) {
      return fail('InvalidKind', `${path}: ${group ? `${group}/` : ''}${kind} is not a supported backend; use a Service or ${SWITCHBOARD_GROUP}/ProxyBackend`);
    }
    const from = { ...this.#referrer, namespace: this.#routeNamespace };
    if (!referencePermitted(this.#snapshot.referenceGrants, from, { group, kind, namespace, name })) {
      return fail('RefNotPermitted', `${path}: ${kind} ${namespace}/${name} is in another namespace and no ReferenceGrant in ${namespace} allows ${this.#referrer.kind}s from ${this.#routeNamespace}`);
    }
    return isService ? this.#service(namespace, name, ref.port, path) : this.#proxyBackend(namespace, name, path);
  }

  #models(ref: BackendObjectReference, path: string, rule: ModelRuleContext | undefined): BackendResolution {
    if (!this.#snapshot.proxyModels) return fail('InvalidKind', `${path}: the ProxyModel API is disabled (enable with --enable-proxy-models / chart value proxyModels.enabled)`);
    if (!rule) return fail('InvalidKind', `${path}: ProxyModels are a rule's backend only`);
    const problem = ruleProblem(rule, { name: String(ref.name) }, path);
    if (problem) return { backendKey: null, problem };
    // A model's policies may name backends of their own (a tunnel's Service): they join this resolver's.
    const backend = modelsBackend(this.#snapshot.proxyModels, this.#routeNamespace, rule, { snapshot: this.#snapshot, backends: this.backends });
    this.backends.set(backend.key, backend);
    return { backendKey: backend.key };
  }

  #service(namespace: string, name: string, port: unknown, path: string): BackendResolution {
    const id = `${namespace}/${name}`;
    const service = this.#snapshot.services.get(id);
    if (!service) return fail('BackendNotFound', `${path}: Service ${id} not found`);
    if (!isPort(port)) return fail('BackendNotFound', `${path}.port is required for a Service and must be 1..65535`);
    const spec = isDict(service.spec) ? service.spec : {};
    const servicePort = listOf<ServicePort>(spec.ports).find((p) => p.port === port);
    if (!servicePort) return fail('BackendNotFound', `${path}: Service ${id} has no port ${port}`);
    const backend = serviceBackend(service, servicePort, this.#snapshot.endpointSlices.get(id) ?? NO_SLICES, namespace, name);
    if (!this.backends.has(backend.key)) this.backends.set(backend.key, backend);
    return { backendKey: backend.key };
  }

  #proxyBackend(namespace: string, name: string, path: string): BackendResolution {
    const id = `${namespace}/${name}`;
    const object = this.#snapshot.proxyBackends.get(id);
    if (!object) return fail('BackendNotFound', `${path}: ProxyBackend ${id} not found`);
    const { backend, problem, named } = translateProxyBackend(object, this.#snapshot);
    if (!backend) return fail('BackendNotFound', `${path}: ProxyBackend ${id} is not usable: ${problem}`);
    this.backends.set(backend.key, backend);
    // Backends its providers' policies name (a tunnel's Service): the proxy looks them up by key.
    if (named) for (const [key, other] of named) if (!this.backends.has(key)) this.backends.set(key, other);
    return { backendKey: backend.key };
  }
}

const NO_SLICES: readonly KubeObject[] = Object.freeze([]);

/**
 * A Service port's Backend is a function of the Service object, the port and the Service's
 * EndpointSlice list alone: one object per (Service, port, slice list), shared by every route
 * that names it — at 10k routes over 100 Services, 100 Backends (and key strings) instead of 10k
 * (issue 15: the config thread keeps every route's entry). The slice lists are the snapshot's,
 * kept between translations while no slice changes (snapshot.ts IndexCache), so an edit reuses
 * them too. IR objects are never changed once made (incremental.ts reuses them by identity).
 */
const serviceBackends = new WeakMap<KubeObject, Map<number, { readonly slices: readonly KubeObject[]; readonly backend: Backend }>>();

function serviceBackend(service: KubeObject, servicePort: ServicePort, slices: readonly KubeObject[], namespace: string, name: string): Backend {
  let byPort = serviceBackends.get(service);
  const kept = byPort?.get(servicePort.port);
  // The Service is found by `namespace/name` (snapshot.services): the same object has the same ones.
  if (kept !== undefined && kept.slices === slices && kept.backend.namespace === namespace && kept.backend.name === name) return kept.backend;
  const { endpoints, appProtocol } = serviceEndpoints(service, servicePort, slices);
  const backend: Backend = { key: `service/${namespace}/${name}:${servicePort.port}`, kind: 'Service', namespace, name, endpoints, rewriteHost: false, ...(appProtocol ? { appProtocol } : {}) };
  if (byPort === undefined) serviceBackends.set(service, (byPort = new Map()));
  byPort.set(servicePort.port, { slices, backend });
  return backend;
}

function fail(reason: string, message: string): BackendResolution {
  return { backendKey: null, problem: { reason, message } };
}
