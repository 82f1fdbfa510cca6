import type { KubeObject, ObjectStatus } from '../../api/gateway/object.ts';
import type { Backend, Route } from '../../ir/types.ts';
import type { GatewayGraph } from './gateway.ts';
import type { ListenerRef } from './policy/apply.ts';
import { mergeListeners, type RouteEntry } from './route-entry.ts';
import type { Attachment } from './route/parents.ts';

/** What translateBody() gathers from every HTTPRoute's translation, in the routes' age order. */
export interface RouteLoopOutput {
  readonly routes: Map<string, Route>;
  readonly backends: Map<string, Backend>;
  readonly attachments: { readonly routeKey: string; readonly attachment: Attachment }[];
  readonly routeStatuses: ObjectStatus[];
  readonly ourRoutes: Map<string, KubeObject>;
  readonly routeListeners: Map<string, readonly ListenerRef[]>;
}

/**
 * One pass over the routes: each route's entry (translated or memoized) added to the outputs in
 * order. `translateRoute` adds the route's listener counts to the graph's listeners.
 */
export function runRouteLoop(httpRoutes: readonly KubeObject[], translateRoute: (object: KubeObject) => RouteEntry): { output: RouteLoopOutput; entries: RouteEntry[] } {
  const output: RouteLoopOutput = { routes: new Map(), backends: new Map(), attachments: [], routeStatuses: [], ourRoutes: new Map(), routeListeners: new Map() };
  const entries: RouteEntry[] = [];
  for (const object of httpRoutes) {
    const entry = translateRoute(object);
    entries.push(entry);
    addEntry(output, object, entry);
  }
  return { output, entries };
}

function addEntry(output: RouteLoopOutput, object: KubeObject, entry: RouteEntry): void {
  const result = entry.result;
  if (result.status) {
    output.routeStatuses.push(result.status);
    output.ourRoutes.set(entry.ourKey as string, object);
  }
  if (!result.route) return;
  const key = result.route.key;
  output.routes.set(key, result.route);
  for (let i = 0; i < entry.attachments.length; i++) output.attachments.push(entry.attachments[i] as (typeof entry.attachments)[number]);
  if (entry.listeners.length > 0) {
    const known = output.routeListeners.get(key);
    output.routeListeners.set(key, known ? mergeListeners(known, entry.listeners) : entry.listeners);
  }
  for (let i = 0; i < entry.backends.length; i++) {
    const [backendKey, backend] = entry.backends[i] as (typeof entry.backends)[number];
    output.backends.set(backendKey, backend);
  }
}

interface Kept {
  readonly httpRoutes: readonly KubeObject[];
  readonly entries: RouteEntry[];
  /** Positions whose translation is not memoized (it read a Secret): translated again every time. */
  readonly volatile: readonly number[];
  readonly output: RouteLoopOutput;
  /** Per position: its index in routeStatuses and its first index in attachments (-1: none). */
  readonly statusAt: Int32Array;
  readonly attachmentAt: Int32Array;
  /** The position whose backend a key holds (the last route naming it: Map.set order). */
  readonly lastWriter: Map<string, number>;
  /** Listener key → attachedRoutes all routes added. */
  readonly counts: Map<string, number>;
}

/**
 * The route loop's outputs kept between translations of a changing object set (issue 15). When
 * the routes come in the same positions and only a few are different objects (a route edit: the
 * age order is patched in place, snapshot.ts), only those positions — and the ones whose
 * translation is never memoized — are translated, and the kept outputs are patched in place: the
 * same route key, status presence, attachment count and backend keys at each such position, else
 * the whole loop runs. The listeners' attachedRoutes are set from the kept totals. Valid while only
 * routes and policies change (the owner calls `clear()` with the route memo's).
 */
export class RouteLoopMemo {
  #kept: Kept | undefined;
  /** The route keys the last run patched (its routes map is last run's, changed only there); undefined after a whole loop. */
  patchedKeys: readonly string[] | undefined;
  /** The entries the last run patched, before and after (same order as `patchedKeys`' routes); undefined after a whole loop. */
  patchedEntries: readonly { readonly was: RouteEntry; readonly now: RouteEntry }[] | undefined;
  /** Runs so far: a user of `patchedKeys` must have seen the run just before (else it missed a patch). */
  runs = 0;

  clear(): void {
    this.#kept = undefined;
    this.patchedKeys = undefined;
    this.patchedEntries = undefined;
  }

  run(httpRoutes: readonly KubeObject[], graph: GatewayGraph, translateRoute: (object: KubeObject) => RouteEntry, memoized: (object: KubeObject) => boolean): RouteLoopOutput {
    this.runs++;
    const kept = this.#kept;
    const patched = kept !== undefined && kept.httpRoutes.length === httpRoutes.length ? this.#patch(kept, httpRoutes, graph, translateRoute, memoized) : undefined;
    if (patched !== undefined && !(patched instanceof Map)) return patched;
    this.patchedKeys = undefined;
    this.patchedEntries = undefined;
    // A full pass. The graph's listeners count from zero; routes a failed patch translated are not
    // translated twice (a Secret read is recorded once): their entries are used, their counts added.
    for (const listener of graph.listeners) listener.attachedRoutes = 0;
    const listeners = new Map(graph.listeners.map((l) => [l.key, l]));
    const translated = patched;
    const { output, entries } = runRouteLoop(httpRoutes, translated === undefined ? translateRoute : (object) => {
      const entry = translated.get(object);
      if (entry === undefined) return translateRoute(object);
      for (const key of entry.result.counted) {
        const listener = listeners.get(key);
        if (listener) listener.attachedRoutes += 1;
      }
      return entry;
    });
    this.#kept = keep(httpRoutes, entries, output, memoized);
    return output;
  }

  /** The patched outputs; undefined: not tried; a Map: tried and failed, with the entries it translated. */
  #patch(kept: Kept, httpRoutes: readonly KubeObject[], graph: GatewayGraph, translateRoute: (object: KubeObject) => RouteEntry, memoized: (object: KubeObject) => boolean): RouteLoopOutput | Map<KubeObject, RouteEntry> | undefined {
    const changed: number[] = [];
    let v = 0;
    for (let i = 0; i < httpRoutes.length; i++) {
      if (httpRoutes[i] !== kept.httpRoutes[i] || kept.volatile[v] === i) changed.push(i);
      if (kept.volatile[v] === i) v++;
    }
    // Many changes: the whole loop is as cheap.
    if (changed.length > 64) return undefined;
    const counts = new Map(kept.counts);
    for (const i of changed) for (const key of (kept.entries[i] as RouteEntry).result.counted) counts.set(key, (counts.get(key) as number) - 1);
    for (const listener of graph.listeners) listener.attachedRoutes = counts.get(listener.key) ?? 0;
    const fresh: RouteEntry[] = [];
    let fits = true;
    for (const i of changed) {
      const entry = translateRoute(httpRoutes[i] as KubeObject);
      fresh.push(entry);
      fits &&= samePlace(kept.entries[i] as RouteEntry, entry);
    }
    if (!fits) return new Map(changed.map((i, n) => [httpRoutes[i] as KubeObject, fresh[n] as RouteEntry]));
    // Every changed position fits in place: patch the outputs (attachments copied: the binds memo compares with the kept array).
    const out = kept.output;
    const attachments = [...out.attachments];
    const entries = kept.entries;
    const pairs: { was: RouteEntry; now: RouteEntry }[] = [];
    for (let n = 0; n < changed.length; n++) {
      const i = changed[n] as number;
      const now = fresh[n] as RouteEntry;
      const object = httpRoutes[i] as KubeObject;
      if (now.result.status) {
        out.routeStatuses[kept.statusAt[i] as number] = now.result.status;
        out.ourRoutes.set(now.ourKey as string, object);
      }
      for (const key of now.result.counted) counts.set(key, (counts.get(key) ?? 0) + 1);
      if (now.result.route) {
        const key = now.result.route.key;
        out.routes.set(key, now.result.route);
        const at = kept.attachmentAt[i] as number;
        for (let a = 0; a < now.attachments.length; a++) attachments[at + a] = now.attachments[a] as (typeof now.attachments)[number];
        if (now.listeners.length > 0) out.routeListeners.set(key, now.listeners);
        for (const [backendKey, backend] of now.backends) if (kept.lastWriter.get(backendKey) === i) out.backends.set(backendKey, backend);
      }
      pairs.push({ was: entries[i] as RouteEntry, now });
      entries[i] = now;
    }
    const output: RouteLoopOutput = { ...out, attachments };
    const stillVolatile = new Set(kept.volatile);
    for (const i of changed) {
      if (memoized(httpRoutes[i] as KubeObject)) stillVolatile.delete(i);
      else stillVolatile.add(i);
    }
    const volatile = [...stillVolatile].sort((a, b) => a - b);
    this.#kept = { ...kept, httpRoutes, entries, output, counts, volatile };
    const keys: string[] = [];
    for (const i of changed) {
      const route = (entries[i] as RouteEntry).result.route;
      if (route) keys.push(route.key);
    }
    this.patchedKeys = keys;
    this.patchedEntries = pairs;
    return output;
  }
}

/** Whether `now` can take `was`'s place in the kept outputs as it is. */
function samePlace(was: RouteEntry, now: RouteEntry): boolean {
  if ((was.result.status === undefined) !== (now.result.status === undefined) || was.ourKey !== now.ourKey) return false;
  const a = was.result.route;
  const b = now.result.route;
  if ((a === undefined) !== (b === undefined) || (a && b && a.key !== b.key)) return false;
  if (was.attachments.length !== now.attachments.length || was.backends.length !== now.backends.length) return false;
  // Listeners: none then some (or the reverse) changes the routeListeners map's order.
  if ((was.listeners.length === 0) !== (now.listeners.length === 0)) return false;
  for (let i = 0; i < was.backends.length; i++) if ((was.backends[i] as readonly [string, Backend])[0] !== (now.backends[i] as readonly [string, Backend])[0]) return false;
  return true;
}

function keep(httpRoutes: readonly KubeObject[], entries: RouteEntry[], output: RouteLoopOutput, memoized: (object: KubeObject) => boolean): Kept | undefined {
  const statusAt = new Int32Array(entries.length).fill(-1);
  const attachmentAt = new Int32Array(entries.length).fill(-1);
  const lastWriter = new Map<string, number>();
  const counts = new Map<string, number>();
  const volatile: number[] = [];
  const routeKeys = new Set<string>();
  let statuses = 0;
  let attachments = 0;
  for (let i = 0; i < entries.length; i++) {
    const entry = entries[i] as RouteEntry;
    if (!memoized(httpRoutes[i] as KubeObject)) volatile.push(i);
    if (entry.result.status) statusAt[i] = statuses++;
    for (const key of entry.result.counted) counts.set(key, (counts.get(key) ?? 0) + 1);
    if (!entry.result.route) continue;
    // Two routes with one key merge their listeners: nothing is patched in place then.
    if (routeKeys.has(entry.result.route.key)) return undefined;
    routeKeys.add(entry.result.route.key);
    attachmentAt[i] = attachments;
    attachments += entry.attachments.length;
    for (const [key] of entry.backends) lastWriter.set(key, i);
  }
  return { httpRoutes, entries, volatile, output, statusAt, attachmentAt, lastWriter, counts };
}
