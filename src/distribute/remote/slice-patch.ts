/**
 * A proxy's slice (split.ts) of a new config, made from its slice of the previous one when the
 * new config was patched from it (ir/config-delta.ts): the cost follows the change — the binds
 * that changed (their attachments), the routes and backends the change set or removed — not the
 * 1,000s of resources of the slice. Each slice made here carries what that needs (reference
 * counts of routes and backends, the serialized entry of each resource, the SUM total, the secret
 * values held); the first one for a gateway set is cut whole, with those counts.
 *
 * The state is handed from one slice to the next and changed in place: a slice given to
 * nextSlice() as `before` must not be read again (the distributor keeps only the newest).
 *
 * Falls back to a whole cut when the change is not one it can follow: no recorded delta, binds
 * added, removed or reordered, the kept listeners changed (routes are pruned per kept set), another
 * list of secret values, or a slice whose backends name other backends (a reference cycle would
 * keep an unreachable backend alive under reference counting).
 */
import { deltaFrom } from '../../ir/config-delta.ts';
import { backendReferences, bindReferences, routeReferences } from '../../ir/references.ts';
import type { Bind, ProxyConfig } from '../../ir/types.ts';
import {
  cuts, gatewayId, internKept, prunedFor, resourceId, reuseSlice, secretsIn, serialize, sliceVersion, termOf,
  type GatewayRef, type ProxySlice, type Resource, type ResourceKind, type SecretValues, type Serialized,
} from './split.ts';
import { addTerm, subtractTerm, sumVersionText, SystemVersionScheme } from './version.ts';

interface SliceState {
  config: ProxyConfig;
  readonly wanted: ReadonlySet<string>;
  readonly secrets: SecretValues | undefined;
  readonly kept: ReadonlySet<string>;
  readonly resources: Map<string, Resource>;
  readonly entries: Map<string, Serialized>;
  /** Per kept bind (by key): the bind object it was cut from and the route keys its kept listeners attach. */
  readonly binds: Map<string, { readonly source: Bind; readonly routeKeys: readonly string[] }>;
  /** Attachments per route key, over the kept listeners (a key may be missing from the config). */
  readonly routeRefs: Map<string, number>;
  /** References per backend key, from the resources in the slice (a key may be missing from the config). */
  readonly backendRefs: Map<string, number>;
  /** Resources holding each secret value. */
  readonly secretRefs: Map<string, number>;
  total: bigint;
  /** A backend in the slice names another backend: not patched (see the module comment). */
  backendEdges: boolean;
}

const states = new WeakMap<ProxySlice, SliceState>();

/**
 * The slice of `config` for `gateways`: `before` itself when the change cannot concern it
 * (reuseSlice), `before` patched when it can follow the change, else cut whole.
 */
export function nextSlice(before: ProxySlice | undefined, config: ProxyConfig, gateways: readonly GatewayRef[], secrets?: SecretValues): ProxySlice {
  const state = before ? states.get(before) : undefined;
  if (before) {
    const reused = reuseSlice(before, config, secrets);
    if (reused) {
      if (state) {
        state.config = config;
        states.delete(before);
        states.set(reused, state);
      }
      return reused;
    }
  }
  if (before && state && patch(state, config, secrets)) {
    states.delete(before);
    return sliceOf(state);
  }
  return sliceOf(cutWhole(config, new Set(gateways.map(gatewayId)), secrets));
}

function keptListenersOf(config: ProxyConfig, wanted: ReadonlySet<string>): ReadonlySet<string> {
  const keys = new Set<string>();
  for (const bind of config.binds) for (const listener of bind.listeners) if (wanted.has(gatewayId(listener.gateway))) keys.add(listener.key);
  return internKept(keys);
}

function cutWhole(config: ProxyConfig, wanted: ReadonlySet<string>, secrets: SecretValues | undefined): SliceState {
  const state: SliceState = {
    config, wanted, secrets, kept: keptListenersOf(config, wanted),
    resources: new Map(), entries: new Map(), binds: new Map(), routeRefs: new Map(), backendRefs: new Map(), secretRefs: new Map(),
    total: 0n, backendEdges: false,
  };
  for (const bind of config.binds) setBind(state, bind);
  return state;
}

/** `state` moved on to `config`, in place; false (state unusable, cut whole) when the change is not one it follows. */
function patch(state: SliceState, config: ProxyConfig, secrets: SecretValues | undefined): boolean {
  if (state.backendEdges || state.secrets !== secrets) return false;
  const delta = deltaFrom(config, state.config);
  const previous = state.config;
  if (!delta || config.binds.length !== previous.binds.length) return false;
  if (config.binds.some((bind, i) => bind.key !== previous.binds[i]?.key)) return false;
  if (keptListenersOf(config, state.wanted) !== state.kept) return false;
  state.config = config;
  for (let i = 0; i < config.binds.length; i++) {
    const now = config.binds[i] as Bind;
    if (now === previous.binds[i]) continue;
    // The new bind is counted before the old one is dropped: a route or backend both name is kept, not removed and cut again.
    const id = resourceId('bind', now.key);
    const old = state.binds.get(now.key);
    const oldEntry = state.entries.get(id);
    state.binds.delete(now.key);
    setBind(state, now);
    if (oldEntry) {
      if (!state.binds.has(now.key)) {
        state.resources.delete(id);
        state.entries.delete(id);
      }
      unaccount(state, id, oldEntry);
    }
    for (const key of old?.routeKeys ?? []) unref(state, 'route', key);
  }
  for (const key of [...delta.routesSet, ...delta.routesRemoved]) if (state.routeRefs.has(key)) syncRoute(state, key);
  for (const key of [...delta.backendsSet, ...delta.backendsRemoved]) if (state.backendRefs.has(key)) syncBackend(state, key);
  return !state.backendEdges;
}

function sliceOf(state: SliceState): ProxySlice {
  const { resources } = state;
  const version = sumVersionText(state.total);
  let sorted: string | undefined;
  const slice: ProxySlice = {
    resources,
    redactions: state.secrets ? state.secrets.values.filter((v) => state.secretRefs.has(v)) : [],
    version,
    versionIn: (scheme) => (scheme === SystemVersionScheme.SUM ? version : (sorted ??= sliceVersion(resources))),
  };
  states.set(slice, state);
  // reuseSlice() reads the same counts: a key referenced and absent from the config concerns the slice.
  cuts.set(slice, { config: state.config, wanted: state.wanted, secrets: state.secrets, missingRoutes: state.routeRefs, missingBackends: state.backendRefs });
  return slice;
}

function setBind(state: SliceState, bind: Bind): void {
  const listeners = bind.listeners.filter((l) => state.wanted.has(gatewayId(l.gateway)));
  if (listeners.length === 0) return;
  const whole = listeners.length === bind.listeners.length;
  const routeKeys: string[] = [];
  for (const listener of listeners) for (const attachment of listener.routes) routeKeys.push(attachment.routeKey);
  state.binds.set(bind.key, { source: bind, routeKeys });
  addResource(state, 'bind', bind.key, serialize(whole ? bind : { ...bind, listeners }, whole, bindReferences));
  for (const key of routeKeys) ref(state, 'route', key);
}

function ref(state: SliceState, kind: 'route' | 'backend', key: string): void {
  const refs = kind === 'route' ? state.routeRefs : state.backendRefs;
  const count = (refs.get(key) ?? 0) + 1;
  refs.set(key, count);
  if (count === 1) (kind === 'route' ? syncRoute : syncBackend)(state, key);
}

function unref(state: SliceState, kind: 'route' | 'backend', key: string): void {
  const refs = kind === 'route' ? state.routeRefs : state.backendRefs;
  const count = (refs.get(key) ?? 0) - 1;
  if (count > 0) {
    refs.set(key, count);
    return;
  }
  refs.delete(key);
  (kind === 'route' ? syncRoute : syncBackend)(state, key);
}

/** The route's resource as the counts and the config say now: added, replaced or removed. */
function syncRoute(state: SliceState, key: string): void {
  const route = state.routeRefs.has(key) ? state.config.routes[key] : undefined;
  const id = resourceId('route', key);
  const entry = route === undefined ? undefined : serialize(prunedFor(route, state.kept), true, routeReferences);
  const held = state.entries.get(id);
  if (held === entry) return;
  if (held) removeResource(state, id);
  if (entry) addResource(state, 'route', key, entry);
}

function syncBackend(state: SliceState, key: string): void {
  const backend = state.backendRefs.has(key) ? state.config.backends[key] : undefined;
  const id = resourceId('backend', key);
  const entry = backend === undefined ? undefined : serialize(backend, true, backendReferences);
  const held = state.entries.get(id);
  if (held === entry) return;
  if (held) removeResource(state, id);
  if (entry) {
    if (entry.backendKeys.length > 0) state.backendEdges = true;
    addResource(state, 'backend', key, entry);
  }
}

function addResource(state: SliceState, kind: ResourceKind, name: string, entry: Serialized): void {
  const id = resourceId(kind, name);
  state.resources.set(id, { kind, name, version: entry.version, json: entry.json });
  state.entries.set(id, entry);
  state.total = addTerm(state.total, termOf(entry, id));
  if (state.secrets) for (const value of secretsIn(entry, state.secrets)) state.secretRefs.set(value, (state.secretRefs.get(value) ?? 0) + 1);
  for (const key of entry.backendKeys) ref(state, 'backend', key);
}

function removeResource(state: SliceState, id: string): void {
  const entry = state.entries.get(id);
  if (entry === undefined) return;
  state.resources.delete(id);
  state.entries.delete(id);
  unaccount(state, id, entry);
}

/** Takes `entry` (held as `id`) out of the total, the secret counts and the backend references. */
function unaccount(state: SliceState, id: string, entry: Serialized): void {
  state.total = subtractTerm(state.total, termOf(entry, id));
  if (state.secrets) {
    for (const value of secretsIn(entry, state.secrets)) {
      const count = (state.secretRefs.get(value) ?? 0) - 1;
      if (count > 0) state.secretRefs.set(value, count);
      else state.secretRefs.delete(value);
    }
  }
  for (const key of entry.backendKeys) unref(state, 'backend', key);
}
