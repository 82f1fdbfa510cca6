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
 *   only under server-side apply"); a field another manager owns stays theirs.
 *
 * Not implemented (refused with an error rather than misapplied): `$retainKeys`,
 * `$deleteFromPrimitiveList`, `$setElementOrder`, any other `$` directive.
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
  for (const [key, value] of Object.entries(patch)) {
    if (key === DIRECTIVE) continue;
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

/** A map with every `$patch` removed, at any depth (what a replacement leaves in the object). */
function withoutDirectives(value: JsonMap): JsonMap {
  const out: JsonMap = {};
  for (const [key, v] of Object.entries(value)) {
    if (key === DIRECTIVE || v === null) continue;
    out[key] = isMap(v) ? withoutDirectives(v) : Array.isArray(v) ? v.map((item) => (isMap(item) ? withoutDirectives(item) : item)) : v;
  }
  return out;
}
