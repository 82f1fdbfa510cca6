/** Between the resource model (split.ts) and the generated protobuf messages (gen/v1/config_pb). */
import { create } from '@bufbuild/protobuf';
import { ResourceRefSchema, ResourceSchema, ResourceType, ResourceVersionSchema, type Resource as WireResource, type ResourceRef, type ResourceVersion } from './gen/v1/config_pb.js';
import { parseResourceId, resourceId, type Delta, type Resource, type ResourceKind } from './split.ts';

const TO_WIRE: Readonly<Record<ResourceKind, ResourceType>> = {
  bind: ResourceType.BIND,
  route: ResourceType.ROUTE,
  backend: ResourceType.BACKEND,
};

export function kindOf(type: ResourceType): ResourceKind {
  switch (type) {
    case ResourceType.BIND: return 'bind';
    case ResourceType.ROUTE: return 'route';
    case ResourceType.BACKEND: return 'backend';
    default: throw new Error(`unknown resource type ${String(type)}`);
  }
}

export function toWireResource(resource: Resource): WireResource {
  return create(ResourceSchema, { type: TO_WIRE[resource.kind], name: resource.name, version: resource.version, body: Buffer.from(resource.json) });
}

export function toWireRef(ref: { kind: ResourceKind; name: string }): ResourceRef {
  return create(ResourceRefSchema, { type: TO_WIRE[ref.kind], name: ref.name });
}

const decoder = new TextDecoder('utf-8', { fatal: true });

/** A response's resources as a Delta; throws on an unknown resource type or a body that is not UTF-8. */
export function fromWire(resources: readonly WireResource[], removed: readonly ResourceRef[]): Delta {
  return {
    added: resources.map((r) => ({ kind: kindOf(r.type), name: r.name, version: r.version, json: decoder.decode(r.body) })),
    removed: removed.map((r) => ({ kind: kindOf(r.type), name: r.name })),
  };
}

export function toWireVersions(versions: ReadonlyMap<string, string>): ResourceVersion[] {
  return [...versions].map(([id, version]) => {
    const { kind, name } = parseResourceId(id);
    return create(ResourceVersionSchema, { type: TO_WIRE[kind], name, version });
  });
}

/** A subscriber's initial resources as held versions; entries of unknown types are dropped (resent). */
export function fromWireVersions(versions: readonly ResourceVersion[]): Map<string, string> {
  const held = new Map<string, string>();
  for (const v of versions) {
    if (v.type === ResourceType.BIND || v.type === ResourceType.ROUTE || v.type === ResourceType.BACKEND) held.set(resourceId(kindOf(v.type), v.name), v.version);
  }
  return held;
}
