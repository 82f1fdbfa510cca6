/**
 * Cutting a ProxyConfig into the resources one remote proxy is entitled to, and the delta between
 * two such sets. Pure functions over the IR: the gRPC server (server.ts) and the tests use them.
 *
 * A proxy serves some Gateways of one namespace. What it receives:
 *   - each Bind that has a listener of those Gateways, with only those listeners (another
 *     Gateway's listener on the same port, its TLS keys included, stays behind);
 *   - each Route attached to a kept listener, its `*ByListener` maps pruned to kept listeners (the
 *     entries of other Gateways' listeners hold their policies);
 *   - each Backend a kept Bind, Route or Backend names through a `backendKey`, transitively (rule
 *     backends, mirrors, and the service endpoints inside effective policies: extAuth, extProc,
 *     rate-limit services, JWKS, token endpoints …), read by the typed walk over the IR's declared
 *     reference fields that src/ir/validate.ts checks too (src/ir/references.ts). A `"backendKey"`
 *     a user writes inside free-form JSON (jwtSign claims, a transformation body) is not followed:
 *     it would hand this proxy another namespace's backend and its credentials.
 * So the Secret-derived values in the IR (certificates, API keys, credentials) travel only to the
 * proxies of the Gateways whose config holds them.
 */
import { hash as digest } from 'node:crypto';
import { backendReferences, bindReferences, routeReferences, type ReferenceVisitor } from '../../ir/references.ts';
import { deltaFrom } from '../../ir/config-delta.ts';
import type { Backend, Bind, ProxyConfig, Route } from '../../ir/types.ts';
import { addTerm, sortedVersion, sumVersionText, SystemVersionScheme, versionTerm } from './version.ts';

export type ResourceKind = 'bind' | 'route' | 'backend';

export interface GatewayRef {
  readonly namespace: string;
  readonly name: string;
}

/** One IR object as it travels: its JSON and a content version. */
export interface Resource {
  readonly kind: ResourceKind;
  readonly name: string;
  readonly version: string;
  /** JSON text; encoded to bytes only when sent (most resources of a publish are not). */
  readonly json: string;
}

/** Resources by `resourceId(kind, name)`. */
export type ResourceSet = ReadonlyMap<string, Resource>;

/** What a proxy holds: versions by `resourceId(kind, name)`. */
export type VersionMap = ReadonlyMap<string, string>;

export interface ProxySlice {
  readonly resources: ResourceSet;
  /** With SecretValues given to the cut: those its resources hold (redactionsFor), in their order. */
  readonly redactions: readonly string[];
  /**
   * Content hash of every resource's kind, name and version (SUM scheme, version.ts): equal slices
   * have equal versions.
   */
  readonly version: string;
  /** The version in `scheme`: SORTED (for a proxy built before schemes) is computed when first asked. */
  versionIn(scheme: SystemVersionScheme): string;
}

export interface Delta {
  readonly added: readonly Resource[];
  readonly removed: readonly { readonly kind: ResourceKind; readonly name: string }[];
}

export const resourceId = (kind: ResourceKind, name: string): string => `${kind}\u0000${name}`;

export function parseResourceId(id: string): { kind: ResourceKind; name: string } {
  const at = id.indexOf('\u0000');
  return { kind: id.slice(0, at) as ResourceKind, name: id.slice(at + 1) };
}

function hash(text: string): string {
  return digest('sha256', text, 'base64url').slice(0, 22);
}

/**
 * Serialising is most of a split's cost; an IR object the translator reuses between configs (or
 * that several gateway sets share) is serialised once.
 */
const serialized = new WeakMap<object, Serialized>();

export interface Serialized {
  readonly json: string;
  readonly version: string;
  /** The backends it names (src/ir/references.ts). */
  readonly backendKeys: readonly string[];
  /** Its SUM version term (version.ts) under the resource id it was last cut as (a value's key does not change). */
  term?: { readonly id: string; readonly value: bigint };
  /** The secret values its JSON holds, for the SecretValues it was last scanned with. */
  secrets?: { readonly of: SecretValues; readonly found: readonly string[] };
}

/**
 * A config's Secret-derived values, as one object per distinct list (secretValuesOf): a cut
 * remembers per serialized value which of them its JSON holds, and scans it again only for
 * another list — not every resource's JSON per value per cut (~1.6 ms per proxy per edit).
 */
export interface SecretValues {
  readonly values: readonly string[];
  /** Each value as it appears inside a JSON string. */
  readonly needles: readonly string[];
}

/** `values` as SecretValues: `previous` itself when the list is the same, so what was scanned for it stays known. */
export function secretValuesOf(values: readonly string[], previous?: SecretValues): SecretValues {
  if (previous && previous.values.length === values.length && previous.values.every((v, i) => v === values[i])) return previous;
  return { values: [...values], needles: values.map((v) => JSON.stringify(v).slice(1, -1)) };
}

/** For slice-patch.ts. */
export function secretsIn(entry: Serialized, secrets: SecretValues): readonly string[] {
  if (entry.secrets?.of === secrets) return entry.secrets.found;
  const found = secrets.values.filter((value, i) => value !== '' && entry.json.includes(secrets.needles[i] as string));
  entry.secrets = { of: secrets, found };
  return found;
}

/** A serialized value's SUM term under `id`, hashed once per value and id. */
export function termOf(entry: Serialized, id: string): bigint {
  if (entry.term?.id !== id) entry.term = { id, value: versionTerm(id, entry.version) };
  return entry.term.value;
}

export function serialize<T extends object>(value: T, cacheable: boolean, references: (value: T, visit: ReferenceVisitor) => void): Serialized {
  const cached = cacheable ? serialized.get(value) : undefined;
  if (cached) return cached;
  const json = JSON.stringify(value);
  const keys = new Set<string>();
  references(value, (key) => keys.add(key));
  const entry: Serialized = { json, version: hash(json), backendKeys: [...keys] };
  if (cacheable) serialized.set(value, entry);
  return entry;
}

export const gatewayId = (gateway: GatewayRef): string => `${gateway.namespace}/${gateway.name}`;

/** The resources of `config` that the proxy of `gateways` serves (see the module comment). */
export function sliceForGateways(config: ProxyConfig, gateways: readonly GatewayRef[], secrets?: SecretValues): ProxySlice {
  const wanted = new Set(gateways.map(gatewayId));
  const resources = new Map<string, Resource>();
  const keptListeners = new Set<string>();
  const routeKeys = new Set<string>();
  const backendKeys = new Set<string>();
  const missingRoutes = new Set<string>();
  const missingBackends = new Set<string>();
  // The SUM version, term by term (cached per value): no sort of the slice's ids.
  let total = 0n;
  const held = secrets && secrets.values.length > 0 ? new Set<string>() : undefined;
  const add = (id: string, entry: Serialized, resource: Resource): void => {
    resources.set(id, resource);
    total = addTerm(total, termOf(entry, id));
    if (held && secrets) for (const value of secretsIn(entry, secrets)) held.add(value);
  };

  for (const bind of config.binds) {
    const listeners = bind.listeners.filter((l) => wanted.has(gatewayId(l.gateway)));
    if (listeners.length === 0) continue;
    const whole = listeners.length === bind.listeners.length;
    const kept: Bind = whole ? bind : { ...bind, listeners };
    for (const listener of listeners) {
      keptListeners.add(listener.key);
      for (const attachment of listener.routes) routeKeys.add(attachment.routeKey);
    }
    const entry = serialize(kept, whole, bindReferences);
    for (const name of entry.backendKeys) backendKeys.add(name);
    add(resourceId('bind', bind.key), entry, { kind: 'bind', name: bind.key, version: entry.version, json: entry.json });
  }

  const kept = internKept(keptListeners);
  for (const key of routeKeys) {
    const route = config.routes[key];
    if (route === undefined) {
      missingRoutes.add(key);
      continue;
    }
    const entry = serialize(prunedFor(route, kept), true, routeReferences);
    for (const name of entry.backendKeys) backendKeys.add(name);
    add(resourceId('route', key), entry, { kind: 'route', name: key, version: entry.version, json: entry.json });
  }

  // Backends name other backends (an AI provider's policies, an MCP target's …): follow to a fixpoint.
  const pending = [...backendKeys];
  for (let key = pending.pop(); key !== undefined; key = pending.pop()) {
    const backend: Backend | undefined = config.backends[key];
    const id = resourceId('backend', key);
    if (backend === undefined) missingBackends.add(key);
    if (backend === undefined || resources.has(id)) continue;
    const entry = serialize(backend, true, backendReferences);
    add(id, entry, { kind: 'backend', name: key, version: entry.version, json: entry.json });
    for (const next of entry.backendKeys) if (!backendKeys.has(next)) { backendKeys.add(next); pending.push(next); }
  }

  const version = sumVersionText(total);
  let sorted: string | undefined;
  const slice: ProxySlice = {
    resources,
    redactions: held && secrets ? secrets.values.filter((v) => held.has(v)) : [],
    version,
    versionIn: (scheme) => (scheme === SystemVersionScheme.SUM ? version : (sorted ??= sliceVersion(resources))),
  };
  cuts.set(slice, { config, wanted, secrets, missingRoutes, missingBackends });
  return slice;
}

/** What a slice was cut from, for reuseSlice(). */
export interface Cut {
  readonly config: ProxyConfig;
  readonly wanted: ReadonlySet<string>;
  readonly secrets: SecretValues | undefined;
  /** Keys the slice's binds and resources name that the config did not have: a change adding one concerns the slice. */
  readonly missingRoutes: { has(key: string): boolean };
  readonly missingBackends: { has(key: string): boolean };
}

/** For slice-patch.ts, which registers the slices it makes. */
export const cuts = new WeakMap<ProxySlice, Cut>();

/**
 * `previous` again, as the slice of `config` for the same gateways, when the change from the
 * config it was cut from cannot concern it: `config` was patched from that config (its delta is
 * recorded, ir/config-delta.ts), every bind that differs has no listener of these gateways before
 * or after, and no route or backend the change set or removed is in the slice or one it names.
 * Then nothing of the slice's resources changed, and its version and redactions stand (for the
 * same SecretValues). undefined otherwise: cut it again. With a proxy per gateway, an edit recuts
 * the slices of the gateways it concerns, and looks at the others in O(binds + change).
 */
export function reuseSlice(previous: ProxySlice, config: ProxyConfig, secrets?: SecretValues): ProxySlice | undefined {
  const cut = cuts.get(previous);
  if (!cut || cut.secrets !== secrets) return undefined;
  const delta = deltaFrom(config, cut.config);
  if (!delta || config.binds.length !== cut.config.binds.length) return undefined;
  const serves = (bind: Bind | undefined): boolean => bind !== undefined && bind.listeners.some((l) => cut.wanted.has(gatewayId(l.gateway)));
  for (let i = 0; i < config.binds.length; i++) {
    const before = cut.config.binds[i];
    const now = config.binds[i];
    if (now !== before && (serves(before) || serves(now))) return undefined;
  }
  const concerns = (kind: ResourceKind, keys: readonly string[], missing: { has(key: string): boolean }): boolean => keys.some((key) => missing.has(key) || previous.resources.has(resourceId(kind, key)));
  if (concerns('route', delta.routesSet, cut.missingRoutes) || concerns('route', delta.routesRemoved, cut.missingRoutes)) return undefined;
  if (concerns('backend', delta.backendsSet, cut.missingBackends) || concerns('backend', delta.backendsRemoved, cut.missingBackends)) return undefined;
  const slice: ProxySlice = { resources: previous.resources, redactions: previous.redactions, version: previous.version, versionIn: previous.versionIn };
  cuts.set(slice, { ...cut, config });
  return slice;
}

/** The content version of a set of resources in the SORTED scheme (version.ts). */
export function sliceVersion(resources: ResourceSet | VersionMap): string {
  return sortedVersion(mapEntries(resources));
}

function* mapEntries(resources: ResourceSet | VersionMap): Iterable<readonly [string, string]> {
  for (const [id, entry] of resources) yield [id, typeof entry === 'string' ? entry : entry.version];
}

/** What turns `held` into `desired`: changed or new resources, and names to remove. */
export function diffSlice(desired: ResourceSet, held: VersionMap): Delta {
  const added: Resource[] = [];
  for (const [id, resource] of desired) if (held.get(id) !== resource.version) added.push(resource);
  const removed: { kind: ResourceKind; name: string }[] = [];
  for (const id of held.keys()) if (!desired.has(id)) removed.push(parseResourceId(id));
  return { added, removed };
}

export function versionsOf(resources: ResourceSet): Map<string, string> {
  const versions = new Map<string, string>();
  for (const [id, resource] of resources) versions.set(id, resource.version);
  return versions;
}

/**
 * Kept-listener sets by their sorted keys, so each cut for the same gateways uses the same Set
 * object and a route's pruning for it is remembered (prunedFor). Bounded: emptied when full (a
 * set is then made again, and the routes are pruned again once).
 */
const keptSets = new Map<string, ReadonlySet<string>>();
const MAX_KEPT_SETS = 1024;

export function internKept(keys: ReadonlySet<string>): ReadonlySet<string> {
  const id = [...keys].sort().join('\n');
  const known = keptSets.get(id);
  if (known) return known;
  if (keptSets.size >= MAX_KEPT_SETS) keptSets.clear();
  keptSets.set(id, keys);
  return keys;
}

/**
 * A route as the proxy of `kept` listeners gets it, by route object and kept set: an unchanged
 * route of a slice is not walked again per cut (1,000s of routes per proxy per edit), and its
 * pruned copy stays one object, so its serialization is cached like a whole route's.
 */
const pruned = new WeakMap<Route, { readonly kept: ReadonlySet<string>; readonly value: Route }>();

export function prunedFor(route: Route, kept: ReadonlySet<string>): Route {
  const known = pruned.get(route);
  if (known?.kept === kept) return known.value;
  const { value } = pruneRoute(route, kept);
  pruned.set(route, { kept, value });
  return value;
}

/** A route's per-listener policies, without the entries of listeners this proxy does not serve. */
function pruneRoute(route: Route, kept: ReadonlySet<string>): { value: Route; whole: boolean } {
  if (!route.rules.some((r) => r.trafficByListener || r.backends.some((b) => b.backendPolicyByListener))) return { value: route, whole: true };
  let changed = false;
  const rules = route.rules.map((rule) => {
    const traffic = pruneByListener(rule.trafficByListener, kept);
    let backendsChanged = false;
    const backends = rule.backends.map((backend) => {
      const pruned = pruneByListener(backend.backendPolicyByListener, kept);
      if (pruned === backend.backendPolicyByListener) return backend;
      backendsChanged = true;
      return { ...backend, backendPolicyByListener: pruned };
    });
    if (traffic === rule.trafficByListener && !backendsChanged) return rule;
    changed = true;
    return { ...rule, trafficByListener: traffic, backends };
  });
  return changed ? { value: { ...route, rules }, whole: false } : { value: route, whole: true };
}

function pruneByListener<T>(byListener: Readonly<Record<string, T>> | undefined, kept: ReadonlySet<string>): Readonly<Record<string, T>> | undefined {
  if (byListener === undefined) return undefined;
  const keys = Object.keys(byListener);
  if (keys.every((k) => kept.has(k))) return byListener;
  const pruned: Record<string, T> = {};
  for (const key of keys) if (kept.has(key)) pruned[key] = byListener[key] as T;
  return pruned;
}

/**
 * The Secret-derived values that occur in `resources` (as they appear inside JSON strings): a
 * proxy scrubs its log lines of these, and is sent no value its config does not hold.
 */
export function redactionsFor(resources: ResourceSet, secretValues: readonly string[]): string[] {
  if (secretValues.length === 0) return [];
  const texts = [...resources.values()].map((r) => r.json);
  return secretValues.filter((value) => {
    if (value === '') return false;
    const needle = JSON.stringify(value).slice(1, -1);
    return texts.some((text) => text.includes(needle));
  });
}
