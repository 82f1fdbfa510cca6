/**
 * The proxy side of the resource model (split.ts): the resources a proxy holds, updated by each
 * delta, and the ProxyConfig they make. Only changed resources are parsed again.
 */
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
  const binds: Bind[] = [];
  const routes: Record<string, Route> = {};
  const backends: Record<string, Backend> = {};
  for (const { resource, value } of held.values()) {
    if (resource.kind === 'bind') binds.push(value as Bind);
    else if (resource.kind === 'route') routes[resource.name] = value as Route;
    else backends[resource.name] = value as Backend;
  }
  binds.sort((a, b) => a.port - b.port || (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
  return { version, binds, routes, backends };
}
