/** Which fields a write to the main resource or to `/status` touches, and the merge patch. */
import type { Json, JsonObject } from './managed-fields.ts';
import type { ResourceType } from './resources.ts';

/** The fields a write to `sub` may touch: `status` for the status subresource, else everything but identity and (when it has the subresource) status. */
export function scoped(object: JsonObject, t: ResourceType, sub: string): JsonObject {
  if (sub === 'status') return object.status !== undefined ? { status: structuredClone(object.status) } : {};
  const out: JsonObject = {};
  for (const [k, v] of Object.entries(object)) {
    if (k === 'apiVersion' || k === 'kind' || (k === 'status' && t.status)) continue;
    if (k === 'metadata') {
      const meta = v as JsonObject;
      const userMeta: JsonObject = {};
      if (meta.labels !== undefined) userMeta.labels = structuredClone(meta.labels);
      if (meta.annotations !== undefined) userMeta.annotations = structuredClone(meta.annotations);
      // Owner references are user-set too (provisioning applies them; garbage collection reads them).
      if (meta.ownerReferences !== undefined) userMeta.ownerReferences = structuredClone(meta.ownerReferences);
      if (Object.keys(userMeta).length > 0) out.metadata = userMeta;
      continue;
    }
    out[k] = structuredClone(v);
  }
  return out;
}

/** Puts a scoped part back into the whole object, keeping what lies outside the scope. */
export function unscope(current: JsonObject, part: JsonObject, t: ResourceType, sub: string): JsonObject {
  if (sub === 'status') {
    const next = structuredClone(current);
    delete next.status;
    return part.status !== undefined ? { ...next, status: structuredClone(part.status) } : next;
  }
  const meta = structuredClone(current.metadata as JsonObject);
  delete meta.labels;
  delete meta.annotations;
  delete meta.ownerReferences;
  const partMeta = (part.metadata ?? {}) as JsonObject;
  const next: JsonObject = { apiVersion: current.apiVersion!, kind: current.kind!, metadata: { ...meta, ...partMeta } };
  for (const [k, v] of Object.entries(part)) if (k !== 'metadata') next[k] = structuredClone(v);
  if (t.status && current.status !== undefined) next.status = structuredClone(current.status);
  return next;
}

/** Generation counts changes of everything but metadata and status. */
export function specOf(object: JsonObject): JsonObject {
  const { metadata: _metadata, status: _status, ...rest } = object;
  return rest;
}

export function withoutVolatile(object: JsonObject): JsonObject {
  const meta = { ...(object.metadata as JsonObject) };
  delete meta.resourceVersion;
  delete meta.managedFields;
  return { ...object, metadata: meta };
}

/** RFC 7386 JSON merge patch. */
export function mergePatch(target: Json, patch: Json): Json {
  if (patch === null || typeof patch !== 'object' || Array.isArray(patch)) return structuredClone(patch);
  const result: JsonObject = target !== null && typeof target === 'object' && !Array.isArray(target) ? structuredClone(target) : {};
  for (const [k, v] of Object.entries(patch)) {
    if (v === null) delete result[k];
    else result[k] = mergePatch(result[k] ?? null, v);
  }
  return result;
}
