/**
 * A ProxyModel's status `parents` (docs/models.md): one entry per parentRef of ours, with an
 * `Accepted` condition saying whether the model is served through that parent.
 *
 * - API off: `Accepted=False Unsupported`, the API is disabled and how to enable it.
 * - HTTPRoute parent: `Accepted=True` when the model lowers and the parentRef names a rule whose
 *   backendRef is the ProxyModel backend `*`; otherwise `False` with the reason.
 * - Gateway or ListenerSet parent (proxy-model-attach.ts): `Accepted=True` when the model lowers
 *   and at least one HTTPRoute of ours attached to that parent (to that listener, with
 *   `sectionName`) has a models rule; otherwise `False NoMatchingParent`.
 */
import type { Condition, KubeObject } from '../../api/gateway/object.ts';
import { condition } from './status/conditions.ts';
import { ALL_MODELS, isProxyModelRef, lowerModel, namesRule } from './proxy-model.ts';
import { gatewayLikeParent, parentReaches, routeParents } from './proxy-model-attach.ts';
import { isDict, listOf, type Dict } from './read.ts';
import { generationOf, namespaceOf, type Snapshot } from './snapshot.ts';

export const PROXY_MODEL_API_DISABLED = 'the ProxyModel API is disabled (enable with switchboard run --enable-proxy-models, or the chart value proxyModels.enabled)';

/** The Accepted condition of `model` for one of its parents of ours. */
/** `snapshot`: the translation's (its ProxyModels are set when the API is on); Services and virtual models' targets are looked up in it. */
export function modelParentCondition(model: KubeObject, parentRef: Dict, ourRoutes: ReadonlyMap<string, KubeObject>, snapshot: Snapshot | undefined): Condition {
  const generation = generationOf(model);
  if (!snapshot?.proxyModels) return condition('Accepted', false, 'Unsupported', PROXY_MODEL_API_DISABLED, generation);
  // As the backend lowers it: a Custom model whose Service is missing is not Accepted.
  const lowered = lowerModel(model, { snapshot, models: snapshot.proxyModels });
  if (!lowered.route) {
    const [first] = lowered.problems;
    return condition('Accepted', false, first.reason, lowered.problems.map((p) => p.message).join('; '), generation);
  }
  const namespace = namespaceOf(model);
  if (parentRef.kind !== 'HTTPRoute') return gatewayParentCondition(parentRef, namespace, ourRoutes, generation);
  const routeNamespace = typeof parentRef.namespace === 'string' ? parentRef.namespace : namespace;
  const route = ourRoutes.get(`${routeNamespace}/${String(parentRef.name)}`);
  const rules = listOf<Dict>(route && isDict(route.spec) ? route.spec.rules : undefined);
  const served = rules.some((rule, ruleIndex) => {
    const refs = listOf<Dict>(rule.backendRefs);
    const ctx = { routeName: String(parentRef.name), ruleIndex, ...(typeof rule.name === 'string' ? { ruleName: rule.name } : {}), ruleCount: rules.length };
    return refs.length === 1 && isProxyModelRef(refs[0]) && refs[0].name === ALL_MODELS && namesRule(parentRef, namespace, routeNamespace, ctx);
  });
  if (!served) {
    const which = typeof parentRef.sectionName === 'string' ? `the rule named "${parentRef.sectionName}"` : 'its only rule (a route with several rules is named by sectionName)';
    const message = `HTTPRoute ${routeNamespace}/${String(parentRef.name)}: ${which} must exist and have the ProxyModel backend "*" as its only backendRef`;
    return condition('Accepted', false, 'NoMatchingParent', message, generation);
  }
  return condition('Accepted', true, 'Accepted', 'the model is routable through this HTTPRoute rule', generation);
}

/** A Gateway or ListenerSet parent: served by the models rules of our HTTPRoutes attached to it (proxy-model-attach.ts). */
function gatewayParentCondition(parentRef: Dict, namespace: string, ourRoutes: ReadonlyMap<string, KubeObject>, generation: number | undefined): Condition {
  const key = gatewayLikeParent(parentRef, namespace);
  if (!key) return condition('Accepted', false, 'InvalidKind', `a ProxyModel attaches to a Gateway, ListenerSet or HTTPRoute, not ${String(parentRef.kind)}`, generation);
  const served = [...ourRoutes.values()].some((route) => routeParents(route).some((p) => parentReaches(key, p)) && hasModelsRule(route));
  const what = `${key.kind} ${key.namespace}/${key.name}${key.sectionName ? ` (listener ${key.sectionName})` : ''}`;
  if (!served) return condition('Accepted', false, 'NoMatchingParent', `no HTTPRoute attached to ${what}${key.sectionName ? ' through that listener' : ''} has a rule whose only backendRef is the ProxyModel backend "${ALL_MODELS}"`, generation);
  return condition('Accepted', true, 'Accepted', `the model is routable through every HTTPRoute rule with the ProxyModel backend "${ALL_MODELS}" attached to ${what}`, generation);
}

function hasModelsRule(route: KubeObject): boolean {
  return listOf<Dict>(isDict(route.spec) ? route.spec.rules : undefined).some((rule) => {
    const refs = listOf<Dict>(rule.backendRefs);
    return refs.length === 1 && isProxyModelRef(refs[0]) && refs[0].name === ALL_MODELS;
  });
}
