/**
 * Objects and fields outside ProxyPolicy that the data plane ignores (status/not-applied.ts):
 * the ProxyBackend's own fields and inline policies, and the kinds the gateway does not serve
 * at all (ProxyParameters, ProxyModel). Each gets a condition naming the field and why; a log
 * line alone is not enough.
 */
import { GATEWAY_GROUP, SWITCHBOARD_GROUP } from '../../../api/gateway/index.ts';
import type { Condition, KubeObject, ObjectStatus } from '../../../api/gateway/object.ts';
import type { GatewayGraph } from '../gateway.ts';
import { listenerSetId } from '../listenerset.ts';
import { groupOf, isDict, listOf, type Dict } from '../read.ts';
import { generationOf, namespaceOf, type Snapshot } from '../snapshot.ts';
import { condition } from './conditions.ts';
import { parametersCatalog } from '../proxy-model-catalog.ts';
import { modelParentCondition } from '../proxy-model-status.ts';
import {
  describeFindings, explain, findNotApplied, NOT_SERVED, proxyBackendKind, REASON_PARTIALLY_APPLIED, REASON_UNSUPPORTED, type BackendKind, type Finding,
} from './not-applied.ts';

/** Every ignored field of one ProxyBackend: its inline policies, its providers (and theirs), its MCP targets' policies. */
export function proxyBackendFindings(object: KubeObject): Finding[] {
  const spec = isDict(object.spec) ? object.spec : {};
  const kind = proxyBackendKind(object);
  if (!kind) return [];
  const kinds = new Set<BackendKind>([kind]);
  const out = findNotApplied('backend', spec.policies, 'spec.policies', kinds);
  if (isDict(spec.ai)) {
    const providers: [Dict, string][] = isDict(spec.ai.provider)
      ? [[spec.ai.provider, 'spec.ai.provider']]
      : listOf<Dict>(spec.ai.groups).flatMap((g, i) => listOf<Dict>(g.providers).map((p, j): [Dict, string] => [p, `spec.ai.groups[${i}].providers[${j}]`]));
    for (const [provider, at] of providers) {
      out.push(...findNotApplied('provider', provider, at, kinds), ...findNotApplied('backend', provider.policies, `${at}.policies`, kinds));
    }
  }
  if (isDict(spec.mcp)) {
    listOf<Dict>(spec.mcp.targets).forEach((target, i) => {
      if (isDict(target.static)) out.push(...findNotApplied('backend', target.static.policies, `spec.mcp.targets[${i}].static.policies`, kinds));
    });
  }
  return out;
}

/**
 * A ProxyBackend's conditions with its ignored fields folded into `Accepted` (at most 8
 * conditions: one message, not one condition per field): `True` becomes `False` reason
 * `PartiallyApplied` (the backend still serves); an `Accepted=False` keeps its reason and gains
 * the list, unless it is `Invalid` (a schema error: nothing is served).
 */
export function withBackendFindings(object: KubeObject, conditions: readonly Condition[]): Condition[] {
  const findings = proxyBackendFindings(object);
  if (findings.length === 0) return [...conditions];
  const notApplied = `Not applied: ${describeFindings(findings)}`;
  return conditions.map((c) => {
    if (c.type !== 'Accepted') return c;
    if (c.status === 'True') return condition('Accepted', false, REASON_PARTIALLY_APPLIED, `${c.message}; ${notApplied}. The rest is applied`, generationOf(object));
    // A schema error serves nothing: that message alone says what to fix first.
    return c.reason === 'Invalid' ? c : { ...c, message: `${c.message}; ${notApplied}` };
  });
}

/** The `Accepted=False Unsupported` condition of a ProxyBackend type the gateway does not serve. */
export function unservedBackendType(type: string): { reason: string; message: string } | undefined {
  const row = (NOT_SERVED as Readonly<Record<string, { why: string; issue: number }>>)[`ProxyBackend spec.${type}`];
  return row ? { reason: REASON_UNSUPPORTED, message: `spec.${type}: ${explain(row)}` } : undefined;
}

const MAX_MODEL_PARENTS = 16;

/**
 * ProxyParameters and ProxyModel objects: the gateway applies neither yet, so each says so on
 * its status. ProxyParameters gets `conditions: [Accepted=False Unsupported]` naming the fields
 * it sets; a ProxyModel gets one `parents` entry per parentRef that is ours (a Gateway,
 * ListenerSet or HTTPRoute of this controller), `Accepted=False Unsupported`.
 */
export function unservedObjectStatuses(objects: readonly KubeObject[], graph: GatewayGraph, ourRoutes: ReadonlyMap<string, KubeObject>, controllerName: string, snapshot?: Snapshot): ObjectStatus[] {
  const out: ObjectStatus[] = [];
  // Indexed: a for-of over 11k objects allocated an iterator result per object (this runs once per translation, rarely optimised).
  for (let i = 0; i < objects.length; i++) {
    const object = objects[i] as KubeObject;
    // The kind first: a string comparison rules out the 11k other objects without parsing their apiVersion.
    if (!isDict(object) || (object.kind !== 'ProxyParameters' && object.kind !== 'ProxyModel') || typeof object.metadata?.name !== 'string' || groupOf(object.apiVersion) !== SWITCHBOARD_GROUP) continue;
    const meta = { name: object.metadata.name, namespace: namespaceOf(object) };
    if (object.kind === 'ProxyParameters') {
      out.push({ apiVersion: object.apiVersion, kind: object.kind, metadata: meta, status: { conditions: parametersConditions(object, meta.namespace, snapshot) } });
    } else if (object.kind === 'ProxyModel') {
      const spec = isDict(object.spec) ? object.spec : {};
      const parents = listOf<Dict>(spec.parentRefs)
        .filter((ref) => isOurParent(ref, meta.namespace, graph, ourRoutes))
        .slice(0, MAX_MODEL_PARENTS)
        .map((parentRef) => ({
          parentRef,
          controllerName,
          // proxy-model-status.ts: served on an HTTPRoute rule, otherwise why not.
          conditions: [modelParentCondition(object, parentRef, ourRoutes, snapshot)],
        }));
      if (parents.length > 0) out.push({ apiVersion: object.apiVersion, kind: object.kind, metadata: meta, status: { parents } });
    }
  }
  return out;
}

/**
 * Embedded mode's ProxyParameters: `modelCatalog` applies (the translator reads its ConfigMaps,
 * proxy-model-catalog.ts), every other field is `Accepted=False Unsupported`; with a catalog,
 * `ResolvedRefs` says whether its ConfigMaps were found and read.
 */
function parametersConditions(object: KubeObject, namespace: string, snapshot: Snapshot | undefined): Condition[] {
  const generation = generationOf(object);
  const spec = isDict(object.spec) ? object.spec : {};
  const fields = Object.keys(spec).filter((k) => spec[k] !== undefined && k !== 'modelCatalog').map((k) => `spec.${k}`);
  const hasCatalog = spec.modelCatalog !== undefined;
  const accepted = fields.length > 0 || !hasCatalog
    ? condition('Accepted', false, REASON_UNSUPPORTED, `Not applied: ${fields.length > 0 ? fields.join(', ') : 'spec'}: ${explain(NOT_SERVED.ProxyParameters)}`, generation)
    : condition('Accepted', true, 'Accepted', 'spec.modelCatalog applies: the /v1/models of the ProxyModel rules on the Gateways that reference these parameters lists its models', generation);
  if (!hasCatalog || !snapshot) return [accepted];
  const read = parametersCatalog(snapshot, namespace, spec);
  const resolved = read.missing.length > 0
    ? condition('ResolvedRefs', false, 'RefNotFound', `modelCatalog ConfigMap(s) not found in ${namespace}: ${read.missing.join(', ')}`, generation)
    : read.problems.length > 0
      ? condition('ResolvedRefs', false, 'InvalidCatalog', read.problems.slice(0, 8).join('; '), generation)
      : condition('ResolvedRefs', true, 'ResolvedRefs', `modelCatalog: ${read.entries.length} model(s) read`, generation);
  return [accepted, resolved];
}

function isOurParent(ref: Dict, namespace: string, graph: GatewayGraph, ourRoutes: ReadonlyMap<string, KubeObject>): boolean {
  if (typeof ref.name !== 'string') return false;
  const id = `${typeof ref.namespace === 'string' ? ref.namespace : namespace}/${ref.name}`;
  const group = typeof ref.group === 'string' ? ref.group : GATEWAY_GROUP;
  const kind = typeof ref.kind === 'string' ? ref.kind : 'Gateway';
  if (kind === 'Gateway') return group === GATEWAY_GROUP && graph.gateways.has(id);
  if (kind === 'HTTPRoute') return group === GATEWAY_GROUP && ourRoutes.has(id);
  if (kind === 'ListenerSet' || kind === 'XListenerSet') return graph.listenerSets.has(listenerSetId(group, kind, typeof ref.namespace === 'string' ? ref.namespace : namespace, ref.name));
  return false;
}
