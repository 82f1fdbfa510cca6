/**
 * The proxy side of the resource model (split.ts): the resources a proxy holds, updated by each
 * delta, and the ProxyConfig they make. Only changed resources are parsed again.
 */
import { patchConfig } from '../../ir/config-delta.ts';
import type { Backend, Bind, ProxyConfig, Route } from '../../ir/types.ts';
import { resourceId, type Delta, type Resource } from './split.ts';
import { addTerm, subtractTerm, sumVersionText, versionTerm } from './version.ts';

/**
 * A held resource's identity and version, without its JSON text: the parsed value is what the
 * proxy serves from, and the text (a route's is ~0.5 KB) would be a second copy of every route
 * for as long as it is held (issue 15: `switchboard proxy` at 10k routes).
 */
type ResourceHeader = Omit<Resource, 'json'>;

interface Held {
  readonly resource: ResourceHeader;
  readonly value: Bind | Route | Backend;
  /** Its SUM version term (version.ts), hashed when it arrived. */
  readonly term: bigint;
}

export class ResourceCache {
  #held = new Map<string, Held>();
  /** The SUM of #held's terms. */
  #total = 0n;
  /** The last sumVersion() answer, which commit() takes instead of summing the whole set again. */
  #summed: { readonly next: ReadonlyMap<string, Held>; readonly total: bigint } | undefined;

  /** Versions of what is held, by resource id (sent on reconnect as initial resources). */
  versions(): Map<string, string> {
    return new Map([...this.#held].map(([id, h]) => [id, h.resource.version]));
  }

  held(): ResourceHeader[] {
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
      const id = resourceId(resource.kind, resource.name);
      next.set(id, { resource: { kind: resource.kind, name: resource.name, version: resource.version }, value, term: versionTerm(id, resource.version) });
    }
    return next;
  }

  /**
   * The SUM system version of `next` = preview(delta): what is held now, less the terms of the
   * resources the delta touched, plus their terms in `next` — no walk of the unchanged ones.
   */
  sumVersion(next: ReadonlyMap<string, Held>, delta: Delta): string {
    let total = this.#total;
    const touched = new Set<string>();
    for (const { kind, name } of delta.removed) touched.add(resourceId(kind, name));
    for (const { kind, name } of delta.added) touched.add(resourceId(kind, name));
    for (const id of touched) {
      const before = this.#held.get(id);
      if (before) total = subtractTerm(total, before.term);
      const after = next.get(id);
      if (after) total = addTerm(total, after.term);
    }
    this.#summed = { next, total };
    return sumVersionText(total);
  }

  commit(next: Map<string, Held>): void {
    let total = 0n;
    if (this.#summed?.next === next) total = this.#summed.total;
    else for (const held of next.values()) total = addTerm(total, held.term);
    this.#held = next;
    this.#total = total;
    this.#summed = undefined;
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
