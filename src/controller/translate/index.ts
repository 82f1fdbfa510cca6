import type { KubeObject, ObjectStatus } from '../../api/gateway/object.ts';
import type { ProxyConfig, Route } from '../../ir/types.ts';
import { buildBinds } from './binds.ts';
import type { BindsMemo } from './binds-memo.ts';
import { buildGatewayGraph } from './gateway.ts';
import { translateGatewayClasses } from './gatewayclass.ts';
import type { ApplyMemo } from './policy/apply-memo.ts';
import type { PolicyPassMemo } from './policy/pass-memo.ts';
import type { RouteMemo } from './route-memo.ts';
import { routeEntryOf } from './route-entry.ts';
import { runRouteLoop, type RouteLoopMemo } from './route-loop.ts';
import { translateHttpRoute } from './route/index.ts';
import { resolvePolicies } from './policy/index.ts';
import type { ScrubbedList, SecretLedger } from './secret-ledger.ts';
import { compareStrings, indexObjects, type IndexCache, type RouteOrderCache } from './snapshot.ts';
import { byObject } from './object-delta.ts';
import type { StatusOrder } from './status-order.ts';
import { gatewayStatus, listenerSetStatus } from './status/gateway.ts';
import { proxyBackendStatus } from './status/proxybackend.ts';
import { unservedObjectStatuses } from './status/unapplied-objects.ts';
import { configVersion, type ConfigBody } from './version.ts';

export interface TranslateOptions {
  controllerName: string;
  /** The experimental ProxyModel API (`run --enable-proxy-models`); off by default (proxy-model.ts). */
  proxyModels: boolean;
}

export interface TranslateResult {
  config: ProxyConfig;
  statuses: ObjectStatus[];
  /**
   * JSON Pointers (RFC 6901) of every location in `config` that holds data read from a Secret or
   * derived from one (the key with its Bearer prefix stripped, a password-file line, a key's hash
   * …). /config_dump shows them as "[redacted]". Certificates are public and not listed.
   */
  secretPaths: string[];
  /**
   * Every value read from a Secret or derived from one, including those that never reach the IR
   * (a client API key the IR holds only as a hash): log lines are scrubbed of them. Kept in the
   * process that translated; never part of the config sent to proxies.
   */
  secretValues: string[];
}

export const DEFAULT_CONTROLLER_NAME = 'switchboard.dev/gateway-controller';

/**
 * Gateway API objects (+ ProxyBackend static) → IR and statuses. Pure: the same objects give the
 * same result in any order (everything is sorted; no clock, no randomness). A user's mistake
 * becomes a status condition, never a throw.
 */
export function translate(objects: readonly KubeObject[], options: Partial<TranslateOptions> = {}): TranslateResult {
  const { body, statuses, ledger } = translateBody(objects, options);
  const config = { version: configVersion(body), ...body };
  return { config, statuses, secretPaths: ledger.locate(config), secretValues: ledger.values() };
}

export type { ConfigBody } from './version.ts';

/** translate() up to the version: the incremental translator (incremental.ts) versions the body from cached pieces. */
export function translateBody(objects: readonly KubeObject[], options: Partial<TranslateOptions> = {}, memo?: { routes: RouteMemo; policies: ApplyMemo; pass: PolicyPassMemo; routeOrder: RouteOrderCache; index: IndexCache; binds: BindsMemo; loop: RouteLoopMemo; statusOrder: StatusOrder; scrubbed: ScrubbedList; routesRecord?: (keys: readonly string[], values: Route[]) => Record<string, Route> }): { body: ConfigBody; statuses: ObjectStatus[]; ledger: SecretLedger; routeKeys: readonly string[]; routeValues: Route[] } {
  const controllerName = options.controllerName ?? DEFAULT_CONTROLLER_NAME;
  const snapshot = indexObjects(objects, { proxyModels: options.proxyModels === true, ...(memo ? { routeOrder: memo.routeOrder, cache: memo.index } : {}) });
  const classes = translateGatewayClasses(snapshot.gatewayClasses, controllerName);
  const graph = buildGatewayGraph(snapshot, classes.ours);

  const translateRoute = memo ? memo.routes.over(graph, snapshot, controllerName) : (object: KubeObject) => routeEntryOf(object, translateHttpRoute(object, graph, snapshot, controllerName));
  const loop = memo ? memo.loop.run(snapshot.httpRoutes, graph, translateRoute, (object) => memo.routes.has(object)) : runRouteLoop(snapshot.httpRoutes, translateRoute).output;
  const { routes, attachments, routeStatuses, ourRoutes, routeListeners } = loop;
  // Policy backends join a copy: the loop's map may be kept for the next translation (route-loop.ts).
  const backends = new Map(loop.backends);
  const policies = resolvePolicies({ objects, snapshot, graph, ourRoutes, routes, routeListeners, binds: memo ? memo.binds.build(graph.listeners, attachments) : buildBinds(graph.listeners, attachments), backends, controllerName, ...(memo ? { memo: memo.policies, passMemo: memo.pass, patchedRoutes: { keys: memo.loop.patchedKeys, run: memo.loop.runs, entries: memo.loop.patchedEntries } } : {}) });
  for (const [key, backend] of policies.backends) backends.set(key, backend);
  const ordered = recordInKeyOrder(policies.routes);
  // The incremental translator may give its previous record, patched (incremental.ts, patchRecords).
  const body = { binds: policies.binds, routes: (memo?.routesRecord ?? recordOf)(ordered.keys, ordered.values), backends: sortedRecord(Object.fromEntries(backends)) };
  // concat: one copy of the 10k route statuses, no iteration protocol per element.
  const unsorted = classes.statuses.concat(
    [...graph.gateways.values()].map(gatewayStatus),
    [...graph.listenerSets.values()].map(listenerSetStatus),
    routeStatuses,
    policies.statuses,
    [...snapshot.proxyBackends.values()].map((b) => proxyBackendStatus(b, snapshot)),
    unservedObjectStatuses(objects, graph, ourRoutes, controllerName, snapshot),
  );
  const statuses = memo ? memo.statusOrder.sort(unsorted) : unsorted.sort(byObject);
  const ledger = snapshot.secretLedger;
  // Messages never quote a Secret today; scrubbing them keeps it so for the ones written tomorrow.
  return { body, statuses: ledger.scrubStatuses(statuses, memo?.scrubbed), ledger, routeKeys: ordered.keys, routeValues: ordered.values };
}

/**
 * The routes' keys in key order and the routes at the same positions, from which the IR's record
 * is built (recordOf); incremental.ts walks these arrays instead of the 10k-key record.
 */
function recordInKeyOrder<T>(map: ReadonlyMap<string, T>): { keys: readonly string[]; values: T[] } {
  // The same map as last time with as many entries (the apply memo patches its output in place, keys unchanged): its keys in order are known.
  const known = keysInOrder.get(map);
  if (known !== undefined && known.length === map.size) {
    // Pushed (a packed array, as the first translation's): recordOf() keeps its optimised code for both.
    const values: T[] = [];
    // Indexed: a for-of here allocated an iterator result per key.
    for (let i = 0; i < known.length; i++) values.push(map.get(known[i] as string) as T);
    return { keys: known, values };
  }
  let keys: string[] = [];
  let values: T[] = [];
  // forEach: no [key, value] pair or iterator result per entry.
  map.forEach((value, key) => {
    keys.push(key);
    values.push(value);
  });
  // In key order already when routes were walked in key order: else sorted.
  if (!keys.every((key, i) => i === 0 || compareStrings(keys[i - 1] as string, key) < 0)) {
    // The default order of strings is compareStrings' (UTF-16 code units), compared without a JS
    // call per comparison: ~1.6 vs ~3 ms for 10k keys on the first translation (cold comparator).
    keys = keys.sort();
    values = keys.map((key) => map.get(key) as T);
  }
  keysInOrder.set(map, keys);
  return { keys, values };
}

/**
 * A record of `keys` → `values` (same positions), built in key order. One function for the first
 * translation and the edits after it: the first one's 10k keys get it optimised, so the first
 * edit does not build its 10k-key record unoptimised (~10 ms instead of ~1).
 */
export function recordOf<T>(keys: readonly string[], values: readonly T[]): Record<string, T> {
  const record: Record<string, T> = {};
  for (let i = 0; i < keys.length; i++) record[keys[i] as string] = values[i] as T;
  return record;
}

/** The key order recordInKeyOrder() found per map (the incremental translator's kept output map). */
const keysInOrder = new WeakMap<ReadonlyMap<string, unknown>, readonly string[]>();

function sortedRecord<T>(record: Record<string, T>): Record<string, T> {
  // Built in key order already (routes are walked in order): no sort, no second 10k-entry record.
  const keys = Object.keys(record);
  if (keys.every((key, i) => i === 0 || compareStrings(keys[i - 1] as string, key) < 0)) return record;
  return Object.fromEntries(Object.entries(record).sort(([a], [b]) => compareStrings(a, b)));
}

/** The order of translate()'s statuses (kind, namespace, name, apiVersion): a leaf, so the serving thread can sort without the translator. */
export { byObject };
