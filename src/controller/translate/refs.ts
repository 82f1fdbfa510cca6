import type { ReferenceGrantFrom, ReferenceGrantTo } from '../../api/gateway/index.ts';
import type { KubeObject } from '../../api/gateway/object.ts';
import { isDict, listOf } from './read.ts';

/** Who is referring: the referring object's group, kind and namespace. */
export interface RefFrom { readonly group: string; readonly kind: string; readonly namespace: string }
/** What is referred to. */
export interface RefTo { readonly group: string; readonly kind: string; readonly namespace: string; readonly name: string }

/**
 * Is the reference permitted? Same-namespace references always are; a cross-namespace one needs a
 * ReferenceGrant in the target namespace whose `from` names the referrer and whose `to` names
 * the target kind (and the target name, when the grant names one).
 */
export function referencePermitted(grantsByNamespace: ReadonlyMap<string, readonly KubeObject[]>, from: RefFrom, to: RefTo): boolean {
  if (from.namespace === to.namespace) return true;
  for (const grant of grantsByNamespace.get(to.namespace) ?? []) {
    const spec = isDict(grant.spec) ? grant.spec : {};
    const fromOk = listOf<ReferenceGrantFrom>(spec.from).some((f) => (f.group ?? '') === from.group && f.kind === from.kind && f.namespace === from.namespace);
    if (!fromOk) continue;
    const toOk = listOf<ReferenceGrantTo>(spec.to).some((t) => (t.group ?? '') === to.group && t.kind === to.kind && (t.name === undefined || t.name === '' || t.name === to.name));
    if (toOk) return true;
  }
  return false;
}
