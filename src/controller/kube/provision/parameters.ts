/**
 * The ProxyParameters that apply to one Gateway: the GatewayClass's `spec.parametersRef` and the
 * Gateway's `spec.infrastructure.parametersRef`, each a ProxyParameters object (the class's in
 * the namespace its ref names, the Gateway's in the Gateway's namespace). A ref that names
 * something else, or an object that is missing or invalid, is an error: the Gateway is then not
 * provisioned (nothing half-configured runs) and the error is logged.
 */
import type { KubeObject } from '../../../api/gateway/object.ts';
import { validateProxyObject } from '../../../api/v1alpha1/validate.ts';
import type { ProxyParametersSpec } from '../../../api/v1alpha1/parameters.ts';
import { provisionIssues } from './raw-config.ts';
import { isMap } from './strategic-merge.ts';

export const SWITCHBOARD_GROUP = 'switchboard.dev';

export interface GatewayParameters {
  /** GatewayClass level, then Gateway level (the order typed fields and overlays apply in). */
  readonly classLevel: ProxyParametersSpec | undefined;
  readonly gatewayLevel: ProxyParametersSpec | undefined;
}

export type ParametersResult = { readonly ok: true; readonly parameters: GatewayParameters } | { readonly ok: false; readonly reason: 'InvalidParameters'; readonly message: string };

interface Ref {
  readonly group?: unknown;
  readonly kind?: unknown;
  readonly name?: unknown;
  readonly namespace?: unknown;
}

/** `parameters`: every ProxyParameters of the snapshot by `<namespace>/<name>`. */
export function resolveParameters(gatewayClass: KubeObject, gateway: KubeObject, parameters: ReadonlyMap<string, KubeObject>): ParametersResult {
  const classRef = (gatewayClass.spec as { parametersRef?: Ref } | undefined)?.parametersRef;
  const gatewayRef = (gateway.spec as { infrastructure?: { parametersRef?: Ref } } | undefined)?.infrastructure?.parametersRef;
  const classLevel = classRef ? lookup(classRef, typeof classRef.namespace === 'string' ? classRef.namespace : undefined, `GatewayClass ${gatewayClass.metadata.name}`, parameters) : { spec: undefined };
  if ('error' in classLevel) return { ok: false, reason: 'InvalidParameters', message: classLevel.error };
  const gatewayLevel = gatewayRef ? lookup(gatewayRef, gateway.metadata.namespace ?? 'default', `Gateway ${gateway.metadata.name}`, parameters) : { spec: undefined };
  if ('error' in gatewayLevel) return { ok: false, reason: 'InvalidParameters', message: gatewayLevel.error };
  return { ok: true, parameters: { classLevel: classLevel.spec, gatewayLevel: gatewayLevel.spec } };
}

function lookup(ref: Ref, namespace: string | undefined, owner: string, parameters: ReadonlyMap<string, KubeObject>): { spec: ProxyParametersSpec | undefined } | { error: string } {
  if (ref.group !== SWITCHBOARD_GROUP || ref.kind !== 'ProxyParameters') return { error: `${owner}: parametersRef must name a ${SWITCHBOARD_GROUP} ProxyParameters, got ${String(ref.group)} ${String(ref.kind)}` };
  if (namespace === undefined) return { error: `${owner}: parametersRef to a ProxyParameters needs a namespace` };
  const id = `${namespace}/${String(ref.name)}`;
  const object = parameters.get(id);
  if (!object) return { error: `${owner}: ProxyParameters ${id} not found` };
  const issues = validateProxyObject(object).filter((i) => i.severity === 'error');
  if (issues.length > 0) return { error: `${owner}: ProxyParameters ${id} is invalid: ${issues.map((i) => `${i.path} ${i.message}`).join('; ')}` };
  const spec = (isMap(object.spec) ? object.spec : {}) as ProxyParametersSpec;
  const refused = provisionIssues(spec);
  if (refused.length > 0) return { error: `${owner}: ProxyParameters ${id} is invalid: ${refused.join('; ')}` };
  return { spec };
}
