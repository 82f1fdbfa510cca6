/**
 * ProxyParameters and Gateway status in Kubernetes mode, where ProxyParameters are applied
 * (provisioning). The translator writes the embedded-mode status for every ProxyParameters
 * ("Accepted=False Unsupported": the embedded gateway cannot provision; docs/policies.md); the
 * controller replaces it through the status writer's overlay with what provisioning found:
 *
 * - ProxyParameters: `Accepted` (True; False `Invalid` naming the schema issues, or the
 *   rawConfig keys and log filters provisioning refuses (raw-config.ts); False
 *   `PartiallyApplied` naming the fields the proxy does not act on yet) and
 *   `ResolvedRefs` (False `RefNotFound` when a modelCatalog ConfigMap is missing);
 * - a Gateway whose parameters are missing or invalid: `Accepted=False InvalidParameters` (the
 *   Gateway API reason), with the problem; its workload is left as it is.
 */
import type { Condition, KubeObject, ObjectStatus } from '../../../api/gateway/object.ts';
import { validateProxyObject } from '../../../api/v1alpha1/validate.ts';
import type { ProxyParametersSpec } from '../../../api/v1alpha1/parameters.ts';
import { provisionIssues } from './raw-config.ts';

export interface ProvisionVerdicts {
  /** `<namespace>/<name>` of a ProxyParameters → its conditions (without observedGeneration). */
  readonly parameters: ReadonlyMap<string, readonly Omit<Condition, 'observedGeneration'>[]>;
  /** `<namespace>/<name>` of a Gateway whose parameters are unusable → why. */
  readonly gateways: ReadonlyMap<string, string>;
}

const MAX_MESSAGE_CHARS = 32_768;

/** The conditions of every ProxyParameters of a snapshot. */
export function parametersVerdicts(objects: readonly KubeObject[]): Map<string, Omit<Condition, 'observedGeneration'>[]> {
  const configMaps = new Set(objects.filter((o) => o.kind === 'ConfigMap' && o.apiVersion === 'v1').map((o) => `${o.metadata.namespace ?? 'default'}/${o.metadata.name}`));
  const out = new Map<string, Omit<Condition, 'observedGeneration'>[]>();
  for (const object of objects) {
    if (object.kind !== 'ProxyParameters') continue;
    const namespace = object.metadata.namespace ?? 'default';
    const schemaIssues = validateProxyObject(object).filter((i) => i.severity === 'error').map((i) => `${i.path} ${i.message}`);
    // rawConfig keys and log filters are checked once the schema holds (raw-config.ts).
    const issues = schemaIssues.length > 0 ? schemaIssues : provisionIssues((object.spec ?? {}) as ProxyParametersSpec);
    const ignored = notConsumed((object.spec ?? {}) as ProxyParametersSpec);
    const accepted = issues.length > 0
      ? { type: 'Accepted', status: 'False' as const, reason: 'Invalid', message: issues.join('; ').slice(0, MAX_MESSAGE_CHARS) }
      : ignored.length > 0
        // As elsewhere (docs/policies.md): nothing is Accepted=True while part of it is ignored.
        ? { type: 'Accepted', status: 'False' as const, reason: 'PartiallyApplied', message: `provisioned, but not applied by the proxy yet: ${ignored.join('; ')}` }
        : { type: 'Accepted', status: 'True' as const, reason: 'Accepted', message: 'applied to the proxy workload of the Gateways that reference it' };
    const sources = ((object.spec as ProxyParametersSpec | undefined)?.modelCatalog?.sources ?? []);
    const missing = sources.map((s) => s.configMap?.name).filter((name): name is string => typeof name === 'string' && !configMaps.has(`${namespace}/${name}`));
    const resolved = missing.length === 0
      ? { type: 'ResolvedRefs', status: 'True' as const, reason: 'ResolvedRefs', message: 'every reference resolved' }
      : { type: 'ResolvedRefs', status: 'False' as const, reason: 'RefNotFound', message: `modelCatalog ConfigMap(s) not found in ${namespace}: ${missing.join(', ')}` };
    out.set(`${namespace}/${object.metadata.name}`, [accepted, resolved]);
  }
  return out;
}

/** Fields provisioning carries into the pod that the proxy does not act on yet (docs/kubernetes.md). */
function notConsumed(spec: ProxyParametersSpec): string[] {
  const out: string[] = [];
  if (spec.mesh?.enabled) out.push('spec.mesh (checked by the proxy and exposed as switchboard_proxy_mesh_info; no mesh data path: no HBONE tunnel, no mesh CA certificate)');
  return out;
}

/**
 * The translated statuses with provisioning's verdicts in place of the embedded-mode ones. Runs
 * on every status update (each edit, 11k statuses at bench scale): with no verdict at all the
 * statuses are handed back as they are, and only ProxyParameters and Gateways are looked up.
 */
export function overlayProvisionStatus(statuses: readonly ObjectStatus[], verdicts: ProvisionVerdicts): readonly ObjectStatus[] {
  if (verdicts.parameters.size === 0 && verdicts.gateways.size === 0) return statuses;
  return statuses.map((object) => {
    if (object.kind !== 'ProxyParameters' && object.kind !== 'Gateway') return object;
    const id = `${object.metadata.namespace ?? 'default'}/${object.metadata.name}`;
    const conditions = object.status.conditions as Condition[] | undefined;
    if (object.kind === 'ProxyParameters') {
      const verdict = verdicts.parameters.get(id);
      if (!verdict) return object;
      const generation = conditions?.[0]?.observedGeneration;
      return { ...object, status: { ...object.status, conditions: verdict.map((c) => ({ ...c, ...(generation !== undefined ? { observedGeneration: generation } : {}) })) } };
    }
    if (object.kind === 'Gateway' && conditions) {
      const problem = verdicts.gateways.get(id);
      if (problem === undefined) return object;
      return {
        ...object,
        status: { ...object.status, conditions: conditions.map((c) => (c.type === 'Accepted' ? { ...c, status: 'False' as const, reason: 'InvalidParameters', message: problem.slice(0, MAX_MESSAGE_CHARS) } : c)) },
      };
    }
    return object;
  });
}
