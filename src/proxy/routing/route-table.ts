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
export class RouteTable<R> {
  readonly #byHost: HostTable<RouteTableEntry<R>[]>;
  readonly #candidates = new Map<string, readonly RouteTableEntry<R>[]>();

  /**
   * The same table built a route at a time: yields after each attachment, so a caller can build
   * the table of a listener with thousands of routes in slices (proxy/compile/slices.ts).
   */
  static *build<R>(src: RouteTableSource<R>): Generator<void, RouteTable<R>, void> {
    return new RouteTable(yield* sortedBuckets(src));
  }

  constructor(src: RouteTableSource<R> | SortedBuckets<R>) {
    if (src instanceof SortedBuckets) {
      this.#byHost = new HostTable(src.buckets);
      return;
    }
    const job = sortedBuckets(src);
    let step = job.next();
    while (step.done !== true) step = job.next();
    this.#byHost = new HostTable(step.value.buckets);
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
  readonly buckets: ReadonlyMap<string | null, RouteTableEntry<R>[]>;
  constructor(buckets: ReadonlyMap<string | null, RouteTableEntry<R>[]>) {
    this.buckets = buckets;
  }
}

function* sortedBuckets<R>(src: RouteTableSource<R>): Generator<void, SortedBuckets<R>, void> {
  const buckets = new Map<string | null, RouteTableEntry<R>[]>();
  for (const att of src.attachments) {
    const route = src.routes[att.routeKey];
    if (!route) {
      src.onError(`listener references unknown route ${att.routeKey}`);
      continue;
    }
    const entries = compileRoute(route, src);
    const hostnames = att.hostnames.length > 0 ? att.hostnames.map((h) => h.toLowerCase()) : [null];
    for (const host of new Set(hostnames)) {
      const bucket = buckets.get(host) ?? [];
      bucket.push(...entries);
      buckets.set(host, bucket);
    }
    yield;
  }
  for (const bucket of buckets.values()) {
    bucket.sort(comparePrecedence);
    yield;
  }
  return new SortedBuckets(buckets);
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

function compileRoute<R>(route: Route, src: RouteTableSource<R>): readonly RouteTableEntry<R>[] {
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
  keptEntries.set(route, { payloads, entries: out, errors });
  return out;
}
