import type { Route, RouteAttachment } from '../../ir/types.ts';
import { HostTable } from './host.ts';
import { compileMatch, matches, parseQuery, type RequestView } from './matchers.ts';
import { comparePrecedence, parseCreated, type RankedMatch } from './precedence.ts';

export interface RouteTableEntry<R> extends RankedMatch {
  readonly rule: R;
}

export interface RouteTableSource<R> {
  readonly attachments: readonly RouteAttachment[];
  readonly routes: Readonly<Record<string, Route>>;
  /** The compiled payload of a rule (shared across listeners); undefined drops the rule. */
  ruleOf(route: Route, ruleIndex: number): R | undefined;
  /** A match that cannot compile (bad regex) is dropped and reported; the rest still serves. */
  onError(message: string): void;
}

/** Distinct request hosts remembered with their merged candidate lists; bounded against host-header floods. */
const HOST_CACHE_LIMIT = 1024;

/**
 * One listener's routes. Candidates are grouped by route hostname (exact, wildcards longest first,
 * then routes without hostnames) and sorted by match precedence inside each group, so a lookup
 * walks one precomputed list and stops at the first match.
 */
/** One attachment's entries (its route's, compiled), for a table assembled or changed a route at a time. */
export interface AttachedEntries<R> {
  readonly routeKey: string;
  /** The attachment's hostnames as in the IR (empty: every host the listener accepts). */
  readonly hostnames: readonly string[];
  readonly entries: readonly RouteTableEntry<R>[];
}

export class RouteTable<R> {
  readonly #byHost: HostTable<readonly RouteTableEntry<R>[]>;
  /** The same lists by route hostname: a changed table (withRoutes) starts from them. Never changed in place. */
  readonly #buckets: ReadonlyMap<string | null, readonly RouteTableEntry<R>[]>;
  readonly #candidates = new Map<string, readonly RouteTableEntry<R>[]>();

  /**
   * The same table built a route at a time: yields after each attachment, so a caller can build
   * the table of a listener with thousands of routes in slices (proxy/compile/slices.ts).
   */
  static *build<R>(src: RouteTableSource<R>): Generator<void, RouteTable<R>, void> {
    return new RouteTable(yield* sortedBuckets(src));
  }

  /**
   * A table from attachments whose entries were compiled already (attachmentEntries), in attachment
   * order (undefined: an attachment whose route is unknown, which adds nothing): the same table
   * build() makes from the same routes. Yields after sorting each hostname's list.
   */
  static *assemble<R>(attached: readonly (AttachedEntries<R> | undefined)[]): Generator<void, RouteTable<R>, void> {
    const buckets = new Map<string | null, RouteTableEntry<R>[]>();
    for (const a of attached) if (a) addToBuckets(buckets, a);
    return new RouteTable(yield* sortBuckets(buckets));
  }

  constructor(src: RouteTableSource<R> | SortedBuckets<R>) {
    if (src instanceof SortedBuckets) {
      this.#byHost = new HostTable(src.buckets);
      this.#buckets = src.buckets;
      return;
    }
    const job = sortedBuckets(src);
    let step = job.next();
    while (step.done !== true) step = job.next();
    this.#byHost = new HostTable(step.value.buckets);
    this.#buckets = step.value.buckets;
  }

  /**
   * This table with the entries of each changed route replaced by `entries` (issue 15: one route
   * edit in a listener of 1,000s): per hostname list touched, the route's old entries are dropped
   * and its new ones merged in precedence order — one pass, no sort of the list — giving the table
   * a build from the same routes would give. Each changed route must be attached once to this
   * listener, with the same hostnames as when this table was made (the caller keeps the
   * attachments); lists of other hostnames are shared with this table (neither changes them).
   */
  withRoutes(changes: readonly AttachedEntries<R>[]): RouteTable<R> {
    const touched = new Map<string | null, { readonly routeKeys: Set<string>; readonly added: RouteTableEntry<R>[] }>();
    for (const change of changes) {
      for (const host of hostsOf(change.hostnames)) {
        let t = touched.get(host);
        if (!t) touched.set(host, (t = { routeKeys: new Set(), added: [] }));
        t.routeKeys.add(change.routeKey);
        t.added.push(...change.entries);
      }
    }
    const buckets = new Map(this.#buckets);
    for (const [host, { routeKeys, added }] of touched) {
      const kept = (buckets.get(host) ?? []).filter((e) => !routeKeys.has(e.routeKey));
      buckets.set(host, mergeSorted(kept, added.sort(comparePrecedence)));
    }
    return new RouteTable(new SortedBuckets(buckets));
  }

  /** The candidate lists by route hostname, each in precedence order (tests compare tables with it). */
  buckets(): ReadonlyMap<string | null, readonly RouteTableEntry<R>[]> {
    return this.#buckets;
  }

  /** `host` is normalized (see normalizeHost). */
  match(host: string, req: RequestView): RouteTableEntry<R> | undefined {
    let parsed: ReadonlyMap<string, string> | undefined;
    const query = () => (parsed ??= parseQuery(req.query));
    for (const entry of this.#candidatesFor(host)) {
      if (matches(entry.match, req, query)) return entry;
    }
    return undefined;
  }

  #candidatesFor(host: string): readonly RouteTableEntry<R>[] {
    const cached = this.#candidates.get(host);
    if (cached) return cached;
    const merged = this.#byHost.lookupAll(host).flat();
    if (this.#candidates.size >= HOST_CACHE_LIMIT) this.#candidates.clear();
    this.#candidates.set(host, merged);
    return merged;
  }
}

/** A listener's candidates by route hostname, each list in precedence order. */
class SortedBuckets<R> {
  readonly buckets: ReadonlyMap<string | null, readonly RouteTableEntry<R>[]>;
  constructor(buckets: ReadonlyMap<string | null, readonly RouteTableEntry<R>[]>) {
    this.buckets = buckets;
  }
}

function* sortedBuckets<R>(src: RouteTableSource<R>): Generator<void, SortedBuckets<R>, void> {
  const buckets = new Map<string | null, RouteTableEntry<R>[]>();
  for (const att of src.attachments) {
    const entries = attachmentEntries(att, src.routes, src);
    if (entries) addToBuckets(buckets, { routeKey: att.routeKey, hostnames: att.hostnames, entries });
    yield;
  }
  return yield* sortBuckets(buckets);
}

function* sortBuckets<R>(buckets: Map<string | null, RouteTableEntry<R>[]>): Generator<void, SortedBuckets<R>, void> {
  for (const bucket of buckets.values()) {
    bucket.sort(comparePrecedence);
    yield;
  }
  return new SortedBuckets(buckets);
}

/** The hostname lists an attachment's entries go to: its hostnames (lowercase, once each), or the catch-all. */
function hostsOf(hostnames: readonly string[]): Iterable<string | null> {
  return hostnames.length > 0 ? new Set(hostnames.map((h) => h.toLowerCase())) : [null];
}

function addToBuckets<R>(buckets: Map<string | null, RouteTableEntry<R>[]>, attached: AttachedEntries<R>): void {
  for (const host of hostsOf(attached.hostnames)) {
    const bucket = buckets.get(host) ?? [];
    bucket.push(...attached.entries);
    buckets.set(host, bucket);
  }
}

/** Two lists in precedence order as one (comparePrecedence is a total order over one listener's distinct routes). */
function mergeSorted<R>(a: readonly RouteTableEntry<R>[], b: readonly RouteTableEntry<R>[]): RouteTableEntry<R>[] {
  if (b.length === 0) return a.slice();
  const out: RouteTableEntry<R>[] = [];
  let i = 0;
  let j = 0;
  while (i < a.length && j < b.length) out.push(comparePrecedence(a[i] as RouteTableEntry<R>, b[j] as RouteTableEntry<R>) <= 0 ? (a[i++] as RouteTableEntry<R>) : (b[j++] as RouteTableEntry<R>));
  while (i < a.length) out.push(a[i++] as RouteTableEntry<R>);
  while (j < b.length) out.push(b[j++] as RouteTableEntry<R>);
  return out;
}

/**
 * One attachment's entries: its route's rules (payloads from `src.ruleOf`) with their compiled
 * matches, or undefined when the route is not in `routes` (reported).
 */
export function attachmentEntries<R>(att: RouteAttachment, routes: Readonly<Record<string, Route>>, src: Pick<RouteTableSource<R>, 'ruleOf' | 'onError'>): readonly RouteTableEntry<R>[] | undefined {
  const route = routes[att.routeKey];
  if (!route) {
    src.onError(`listener references unknown route ${att.routeKey}`);
    return undefined;
  }
  return compileRoute(route, src);
}

/**
 * A route's entries as the last table built them, with the rule payloads they were built for and
 * the match errors they reported. A config version that hands over the same Route object with the
 * same payloads (the proxy reuses compiled rules of unchanged routes: compile/reuse.ts) gets the
 * same entries back instead of compiling its matches again; entries are never changed in place.
 */
interface KeptEntries {
  readonly payloads: readonly unknown[];
  readonly entries: readonly RouteTableEntry<unknown>[];
  readonly errors: readonly string[];
}

const keptEntries = new WeakMap<Route, KeptEntries>();
const NO_ERRORS: readonly string[] = [];

function compileRoute<R>(route: Route, src: Pick<RouteTableSource<R>, 'ruleOf' | 'onError'>): readonly RouteTableEntry<R>[] {
  const payloads = route.rules.map((_, ruleIndex) => src.ruleOf(route, ruleIndex));
  const kept = keptEntries.get(route);
  if (kept && kept.payloads.length === payloads.length && kept.payloads.every((p, i) => p === payloads[i])) {
    for (const m of kept.errors) src.onError(m);
    // Same payload objects as these entries hold: they are RouteTableEntry<R>.
    return kept.entries as readonly RouteTableEntry<R>[];
  }
  const out: RouteTableEntry<R>[] = [];
  const errors: string[] = [];
  const routeCreated = parseCreated(route.creationTimestamp);
  route.rules.forEach((rule, ruleIndex) => {
    const payload = payloads[ruleIndex];
    if (payload === undefined) return;
    const irMatches = rule.matches.length > 0 ? rule.matches : [{}];
    irMatches.forEach((m, matchIndex) => {
      try {
        out.push({ match: compileMatch(m), rule: payload, routeCreated, routeKey: route.key, ruleIndex, matchIndex });
      } catch (err) {
        const message = `${rule.key} match ${matchIndex}: ${(err as Error).message}`;
        errors.push(message);
        src.onError(message);
      }
    });
  });
  // Kept with every table that holds the route (one a route): exactly as long as their contents
  // (an array grown by push keeps room for 17), the common no-error case sharing one empty list.
  const entries = out.slice();
  keptEntries.set(route, { payloads, entries, errors: errors.length === 0 ? NO_ERRORS : errors });
  return entries;
}
