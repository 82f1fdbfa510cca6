import type { KubeObject } from '../../api/gateway/object.ts';
import type { GatewayGraph } from './gateway.ts';
import type { ListenerModel } from './listener.ts';
import { routeEntryOf, type RouteEntry } from './route-entry.ts';
import { translateHttpRoute } from './route/index.ts';
import type { Snapshot } from './snapshot.ts';

/**
 * HTTPRoute translations kept between translations of a changing object set (incremental.ts).
 *
 * A route's translation reads the route itself and the world around it — GatewayClasses,
 * Gateways, ListenerSets, Services, EndpointSlices, ReferenceGrants, Namespaces, ProxyBackends,
 * Secrets — never other routes or ProxyPolicies. So while only HTTPRoutes and ProxyPolicies
 * change, an unchanged route (the same object) translates to the same result, and its IR Route
 * and Backends are reused as they are (the same objects: serialised once, compiled once). The
 * owner calls `clear()` whenever anything else changes. Routes whose translation read a Secret
 * are not kept: the Secret ledger must see every read again.
 */
export class RouteMemo {
  #results = new WeakMap<KubeObject, RouteEntry>();

  clear(): void {
    this.#results = new WeakMap();
  }

  /** Whether `object`'s translation is kept (false for one that read a Secret). */
  has(object: KubeObject): boolean {
    return this.#results.has(object);
  }

  /** A translator of routes over one graph: memoized results replay the listener counts they made. */
  over(graph: GatewayGraph, snapshot: Snapshot, controllerName: string): (object: KubeObject) => RouteEntry {
    let listeners: Map<string, ListenerModel> | undefined;
    return (object) => {
      const kept = this.#results.get(object);
      if (kept) {
        listeners ??= new Map(graph.listeners.map((l) => [l.key, l]));
        for (const key of kept.result.counted) {
          const listener = listeners.get(key);
          if (listener) listener.attachedRoutes += 1;
        }
        return kept;
      }
      const touches = snapshot.secretLedger.touches;
      const entry = routeEntryOf(object, translateHttpRoute(object, graph, snapshot, controllerName));
      if (snapshot.secretLedger.touches === touches) this.#results.set(object, entry);
      return entry;
    };
  }
}
