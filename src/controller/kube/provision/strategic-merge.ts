/**
 * Strategic merge of a ProxyParameters overlay's `spec` into a generated object (SPEC.md
 * "Overlay semantics"; the rules of Kubernetes' strategic merge patch,
 * https://kubernetes.io/docs/tasks/manage-kubernetes-objects/update-api-object-kubectl-patch/).
 *
 * Written here: npm has no maintained strategic-merge implementation (only RFC 7396 merge
 * patch, which replaces lists whole). What is implemented:
 *
 * - maps merge key by key, scalars overwrite;
 * - lists whose field has a merge key (MERGE_KEYS: containers by `name`, tolerations by `key`, …)
 *   merge item by item on that key; other lists are replaced whole;
 * - `$patch: delete` in a map removes that map; in a keyed list item, removes that item;
 * - `$patch: replace` in a map replaces the map by the rest of the patch; as a list item
 *   (`{$patch: replace}`) replaces the whole list by the other items;
 * - `null` removes the field. The objects are sent by server-side apply, so a field the
 *   controller no longer applies is removed from the cluster object (SPEC: "a null value deletes
 *   only under server-side apply"); a field another manager owns stays theirs;
 * - `$retainKeys: [k…]` in a map: after the merge only those keys stay (the union-type
 *   directive); a patched field missing from the list is an error, as the API server answers;
 * - `$deleteFromPrimitiveList/<field>: [v…]`: those values are removed from the base's
 *   primitive list `<field>` before the field itself (if patched too) is merged;
 * - `$setElementOrder/<field>: [...]`: the merged list `<field>` is reordered — maps named by
 *   their merge key (`{name: b}`), primitives by value; items the directive does not name keep
 *   their place relative to the base's order (apimachinery's mergeSortedSlice). A patched item
 *   the directive does not name, or named in another relative order, is an error (the
 *   preserve-order proposal's two requirements).
 *
 * The directive rules and examples: kubernetes/community contributors/devel/sig-api-machinery/
 * strategic-merge-patch.md. Any other `$` key is refused with an error rather than misapplied.
 */

export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
export type JsonMap = { [key: string]: Json };

/** List fields merged by key, by field name, as the Kubernetes core types declare them. */
export const MERGE_KEYS: Readonly<Record<string, string>> = {
  containers: 'name',
  initContainers: 'name',
  ephemeralContainers: 'name',
  env: 'name',
  volumes: 'name',
  volumeMounts: 'mountPath',
  imagePullSecrets: 'name',
  tolerations: 'key',
  // Container ports merge on containerPort, Service ports on port (both named `ports`).
  ports: 'port|containerPort',
  hostAliases: 'ip',
  topologySpreadConstraints: 'topologyKey',
};

const DIRECTIVE = '$patch';
const RETAIN_KEYS = '$retainKeys';
const DELETE_FROM_PRIMITIVE_LIST = '$deleteFromPrimitiveList/';
const SET_ELEMENT_ORDER = '$setElementOrder/';

export class StrategicMergeError extends Error {}

export function isMap(value: unknown): value is JsonMap {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** `base` with `patch` merged in; neither is modified. */
export function strategicMerge(base: JsonMap, patch: JsonMap, path = ''): JsonMap {
  const directive = patch[DIRECTIVE];
  if (directive === 'replace') return withoutDirectives(patch);
  if (directive !== undefined && directive !== 'merge') throw new StrategicMergeError(`${path || '.'}: unsupported $patch: ${JSON.stringify(directive)}`);
  const out: JsonMap = { ...base };
  const orders: [field: string, order: Json[]][] = [];
  // Deletions from primitive lists apply to the base, before the field's own patch merges.
  for (const [key, value] of Object.entries(patch)) {
    if (!key.startsWith(DELETE_FROM_PRIMITIVE_LIST)) continue;
    const field = key.slice(DELETE_FROM_PRIMITIVE_LIST.length);
    if (!Array.isArray(value) || value.some((v) => isMap(v) || Array.isArray(v))) throw new StrategicMergeError(`${path}.${key}: must be a list of primitive values`);
    const current = out[field];
    if (current === undefined || current === null) continue;
    if (!Array.isArray(current)) throw new StrategicMergeError(`${path}.${key}: ${path}.${field} is not a list`);
    out[field] = current.filter((item) => !value.includes(item));
  }
  for (const [key, value] of Object.entries(patch)) {
    if (key === DIRECTIVE || key === RETAIN_KEYS || key.startsWith(DELETE_FROM_PRIMITIVE_LIST)) continue;
    if (key.startsWith(SET_ELEMENT_ORDER)) {
      if (!Array.isArray(value)) throw new StrategicMergeError(`${path}.${key}: must be a list`);
      orders.push([key.slice(SET_ELEMENT_ORDER.length), value]);
      continue;
    }
    if (key.startsWith('$')) throw new StrategicMergeError(`${path}.${key}: the ${key} directive is not supported`);
    const here = `${path}.${key}`;
    if (value === null) {
      delete out[key];
    } else if (isMap(value)) {
      if (value[DIRECTIVE] === 'delete') delete out[key];
      else out[key] = strategicMerge(isMap(out[key]) ? out[key] : {}, value, here);
    } else if (Array.isArray(value)) {
      out[key] = mergeList(Array.isArray(out[key]) ? out[key] : [], value, key, here);
    } else {
      out[key] = value;
    }
  }
  for (const [field, order] of orders) {
    const merged = out[field];
    if (!Array.isArray(merged)) continue;
    const patched = patch[field];
    out[field] = setElementOrder(Array.isArray(base[field]) ? base[field] : [], merged, Array.isArray(patched) ? patched : [], order, field, `${path}.${SET_ELEMENT_ORDER}${field}`);
  }
  if (patch[RETAIN_KEYS] !== undefined) return retainKeys(out, patch, path);
  return out;
}

/** `$retainKeys`: only the listed keys stay; every field the patch sets must be listed. */
function retainKeys(merged: JsonMap, patch: JsonMap, path: string): JsonMap {
  const keys = patch[RETAIN_KEYS];
  const here = `${path}.${RETAIN_KEYS}`;
  if (!Array.isArray(keys) || !keys.every((k) => typeof k === 'string')) throw new StrategicMergeError(`${here}: must be a list of field names`);
  const retained = new Set(keys as string[]);
  for (const [key, value] of Object.entries(patch)) {
    if (key.startsWith('$') || value === null) continue;
    if (!retained.has(key)) throw new StrategicMergeError(`${here}: ${path}.${key} is set by the patch but not listed`);
  }
  return Object.fromEntries(Object.entries(merged).filter(([key]) => retained.has(key)));
}

/**
 * `$setElementOrder/<field>`: the items the directive names, in its order, merged with the
 * items it does not name (server-only items, in the base's order): when both of a pair are in
 * the base their base order decides, otherwise the named item goes first — apimachinery's
 * normalizeElementOrder/mergeSortedSlice.
 */
function setElementOrder(base: readonly Json[], merged: readonly Json[], patched: readonly Json[], order: readonly Json[], field: string, path: string): Json[] {
  const keySpec = MERGE_KEYS[field];
  const identity = (item: Json): string => {
    if (!isMap(item)) return JSON.stringify(item);
    const key = keySpec?.split('|').find((k) => item[k] !== undefined);
    if (key === undefined) throw new StrategicMergeError(`${path}: ${field} items need their merge key${keySpec ? ` (${keySpec.replace('|', ' or ')})` : ''} to be ordered`);
    return `${key}=${JSON.stringify(item[key])}`;
  };
  const rank = new Map<string, number>();
  order.forEach((item, i) => rank.set(identity(item), i));
  let last = -1;
  for (const item of patched) {
    if (isMap(item) && (item[DIRECTIVE] === 'delete' || item[DIRECTIVE] === 'replace')) continue;
    const at = rank.get(identity(item));
    if (at === undefined) throw new StrategicMergeError(`${path}: the patched item ${identity(item)} is not listed`);
    if (at < last) throw new StrategicMergeError(`${path}: the patched items are listed in another order`);
    last = at;
  }
  const baseIndex = new Map<string, number>();
  base.forEach((item, i) => baseIndex.set(identity(item), i));
  const named = merged.filter((item) => rank.has(identity(item))).sort((a, b) => rank.get(identity(a))! - rank.get(identity(b))!);
  const others = merged.filter((item) => !rank.has(identity(item)));
  const out: Json[] = [];
  let i = 0;
  let j = 0;
  while (i < named.length || j < others.length) {
    if (j >= others.length) out.push(named[i++]!);
    else if (i >= named.length) out.push(others[j++]!);
    else {
      const l = baseIndex.get(identity(named[i]!));
      const r = baseIndex.get(identity(others[j]!));
      // Both in the base: the base order decides; otherwise the named item first.
      if (l !== undefined && r !== undefined && r < l) out.push(others[j++]!);
      else out.push(named[i++]!);
    }
  }
  return out;
}

function mergeList(base: Json[], patch: Json[], field: string, path: string): Json[] {
  if (patch.some((item) => isMap(item) && item[DIRECTIVE] === 'replace' && Object.keys(item).length === 1)) {
    return patch.filter((item) => !(isMap(item) && item[DIRECTIVE] === 'replace')).map((item) => (isMap(item) ? withoutDirectives(item) : item));
  }
  const keySpec = MERGE_KEYS[field];
  if (keySpec === undefined || !patch.every(isMap)) return patch.map((item) => (isMap(item) ? withoutDirectives(item) : item));
  const out: Json[] = [...base];
  for (const item of patch as JsonMap[]) {
    const key = keySpec.split('|').find((k) => item[k] !== undefined);
    if (key === undefined) throw new StrategicMergeError(`${path}: a ${field} item needs its merge key (${keySpec.replace('|', ' or ')})`);
    const index = out.findIndex((existing) => isMap(existing) && existing[key] === item[key]);
    if (item[DIRECTIVE] === 'delete') {
      if (index >= 0) out.splice(index, 1);
      continue;
    }
    if (index >= 0) out[index] = strategicMerge(out[index] as JsonMap, item, `${path}[${key}=${String(item[key])}]`);
    else out.push(strategicMerge({}, item, `${path}[${key}=${String(item[key])}]`));
  }
  return out;
}

/** A map with every `$` directive removed, at any depth (what a replacement leaves in the object). */
function withoutDirectives(value: JsonMap): JsonMap {
  const out: JsonMap = {};
  for (const [key, v] of Object.entries(value)) {
    if (key.startsWith('$') || v === null) continue;
    out[key] = isMap(v) ? withoutDirectives(v) : Array.isArray(v) ? v.map((item) => (isMap(item) ? withoutDirectives(item) : item)) : v;
  }
  return out;
}
