/**
 * The proxy side of the resource model (split.ts): the resources a proxy holds, updated by each
 * delta, and the ProxyConfig they make. Only changed resources are parsed again.
 */
import { patchConfig } from '../../ir/config-delta.ts';
import type { Backend, Bind, ProxyConfig, Route } from '../../ir/types.ts';
import { resourceId, type Delta, type Resource } from './split.ts';

interface Held {
  readonly resource: Resource;
  readonly value: Bind | Route | Backend;
}

export class ResourceCache {
  #held = new Map<string, Held>();

  /** Versions of what is held, by resource id (sent on reconnect as initial resources). */
  versions(): Map<string, string> {
    return new Map([...this.#held].map(([id, h]) => [id, h.resource.version]));
  }

  held(): Resource[] {
    return [...this.#held.values()].map((h) => h.resource);
  }

  /**
   * The resources after `delta`, without changing what is held: the caller commits them once the
   * config they make is applied. Throws on a body that is not JSON.
   */
  preview(delta: Delta): Map<string, Held> {
    const next = new Map(this.#held);
    for (const { kind, name } of delta.removed) next.delete(resourceId(kind, name));
    for (const resource of delta.added) {
      let value: Bind | Route | Backend;
      try {
        value = JSON.parse(resource.json) as Bind | Route | Backend;
      } catch (err) {
        throw new Error(`${resource.kind} ${JSON.stringify(resource.name)}: body is not JSON: ${(err as Error).message}`, { cause: err });
      }
      if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new Error(`${resource.kind} ${JSON.stringify(resource.name)}: body is not a JSON object`);
      next.set(resourceId(resource.kind, resource.name), { resource, value });
    }
    return next;
  }

  commit(next: Map<string, Held>): void {
    this.#held = next;
  }
}

/** The ProxyConfig of a set of held resources; binds in port order (the IR's order carries no meaning). */
export function assembleConfig(held: ReadonlyMap<string, Held>, version: string): ProxyConfig {
  const routes: Record<string, Route> = {};
  const backends: Record<string, Backend> = {};
  for (const { resource, value } of held.values()) {
    if (resource.kind === 'route') routes[resource.name] = value as Route;
    else if (resource.kind === 'backend') backends[resource.name] = value as Backend;
  }
  return { version, binds: bindsOf(held), routes, backends };
}

function bindsOf(held: ReadonlyMap<string, Held>): Bind[] {
  const binds: Bind[] = [];
  for (const { resource, value } of held.values()) if (resource.kind === 'bind') binds.push(value as Bind);
  return binds.sort((a, b) => a.port - b.port || (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
}

/**
 * The ProxyConfig of `held` — the resources after `delta` — built from `previous`, the config of
 * the resources held before it: only the delta's routes and backends are set or removed, every
 * other entry is the previous object, and the binds are the previous list when no bind changed.
 * The config records its delta (ir/config-delta.ts), so the proxy validates and compiles the
 * change, not the 10,000 routes around it (issue 15). Equal to assembleConfig(held) but for the
 * records' key order (sorted here; the order carries no meaning).
 */
export function patchAssembledConfig(previous: ProxyConfig, held: ReadonlyMap<string, Held>, delta: Delta, version: string): ProxyConfig {
  const routesSet: Record<string, Route> = {};
  const backendsSet: Record<string, Backend> = {};
  let bindsChanged = false;
  for (const { kind, name } of delta.added) {
    const value = held.get(resourceId(kind, name))?.value;
    if (kind === 'bind') bindsChanged = true;
    else if (kind === 'route') routesSet[name] = value as Route;
    else backendsSet[name] = value as Backend;
  }
  // A name removed and added again in one delta is set, not removed (preview applies removals first).
  const routesRemoved: string[] = [];
  const backendsRemoved: string[] = [];
  for (const { kind, name } of delta.removed) {
    if (kind === 'bind') bindsChanged = true;
    else if (kind === 'route' && !Object.hasOwn(routesSet, name)) routesRemoved.push(name);
    else if (kind === 'backend' && !Object.hasOwn(backendsSet, name)) backendsRemoved.push(name);
  }
  const binds = bindsChanged ? bindsOf(held) : [...previous.binds];
  return patchConfig(previous, version, binds, { set: routesSet, removed: routesRemoved }, { set: backendsSet, removed: backendsRemoved });
}
