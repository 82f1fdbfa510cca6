/**
 * ProxyParameters and Gateway status in Kubernetes mode, where ProxyParameters are applied
 * (provisioning). The translator writes the embedded-mode status for every ProxyParameters
 * ("Accepted=False Unsupported": the embedded gateway cannot provision; docs/policies.md); the
 * controller replaces it through the status writer's overlay with what provisioning found:
 *
 * - ProxyParameters: `Accepted` (True, or False `Invalid` naming the schema issues) and
 *   `ResolvedRefs` (False `RefNotFound` when a modelCatalog ConfigMap is missing);
 * - a Gateway whose parameters are missing or invalid: `Accepted=False InvalidParameters` (the
 *   Gateway API reason), with the problem; its workload is left as it is.
 */
import type { Condition, KubeObject, ObjectStatus } from '../../../api/gateway/object.ts';
import { validateProxyObject } from '../../../api/v1alpha1/validate.ts';
import type { ProxyParametersSpec } from '../../../api/v1alpha1/parameters.ts';

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
    const issues = validateProxyObject(object).filter((i) => i.severity === 'error');
    const accepted = issues.length === 0
      ? { type: 'Accepted', status: 'True' as const, reason: 'Accepted', message: 'applied to the proxy workload of the Gateways that reference it' }
      : { type: 'Accepted', status: 'False' as const, reason: 'Invalid', message: issues.map((i) => `${i.path} ${i.message}`).join('; ').slice(0, MAX_MESSAGE_CHARS) };
    const sources = ((object.spec as ProxyParametersSpec | undefined)?.modelCatalog?.sources ?? []);
    const missing = sources.map((s) => s.configMap?.name).filter((name): name is string => typeof name === 'string' && !configMaps.has(`${namespace}/${name}`));
    const resolved = missing.length === 0
      ? { type: 'ResolvedRefs', status: 'True' as const, reason: 'ResolvedRefs', message: 'every reference resolved' }
      : { type: 'ResolvedRefs', status: 'False' as const, reason: 'RefNotFound', message: `modelCatalog ConfigMap(s) not found in ${namespace}: ${missing.join(', ')}` };
    out.set(`${namespace}/${object.metadata.name}`, [accepted, resolved]);
  }
  return out;
}

/** The translated statuses with provisioning's verdicts in place of the embedded-mode ones. */
export function overlayProvisionStatus(statuses: readonly ObjectStatus[], verdicts: ProvisionVerdicts): ObjectStatus[] {
  return statuses.map((object) => {
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
