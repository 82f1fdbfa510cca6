import type { Bind, Route } from '../../../ir/types.ts';
import type { ListenerRef, PolicyPlaces } from './apply.ts';
import { applyToBinds, applyToRoute } from './apply.ts';
import { OutcomeTracker, type TargetHandle } from './merge.ts';
import type { AttachmentIndex } from './places.ts';
import type { PolicySource } from '../../../ir/policy.ts';

type TrackerCall = readonly ['won', TargetHandle | undefined, string] | readonly ['lost', TargetHandle | undefined, string, PolicySource, boolean];

/** An OutcomeTracker that can also write down the calls made while one route is applied. */
export class RecordingTracker extends OutcomeTracker {
  log: TrackerCall[] | undefined;

  override won(via: TargetHandle | undefined, member: string): void {
    this.log?.push(['won', via, member]);
    super.won(via, member);
  }

  override lost(via: TargetHandle | undefined, member: string, by: PolicySource, sameLevel: boolean): void {
    this.log?.push(['lost', via, member, by, sameLevel]);
    super.lost(via, member, by, sameLevel);
  }

  replay(calls: readonly TrackerCall[]): void {
    for (const call of calls) {
      if (call[0] === 'won') super.won(call[1], call[2]);
      else super.lost(call[1], call[2], call[3], call[4]);
    }
  }
}

interface Applied {
  /** The listener list it was applied with: an entry of a memoized route is the same array (route-entry.ts). */
  readonly listenerList: readonly ListenerRef[];
  readonly listeners: string;
  readonly result: Route;
  readonly calls: readonly TrackerCall[];
  /** The attachment point keys the application looked up: it holds while their attachments do. */
  readonly reads: readonly string[];
  /** The translation it was made or last found valid in: only the one just before may be checked against its changes. */
  round: number;
}

/**
 * applyToRoute() results kept between translations (issue 15), by IR Route object (the route
 * memo keeps unchanged routes' objects). A result reads the route, its listeners, the route
 * backends and inline backend policies (the owner calls `clear()` when anything but routes and
 * policies changes) and the policy attachments at the points it looked up: it holds while none
 * of those points' attachments changed since the previous translation (`prepare` diffs the
 * attachment index). A policy edit thus re-applies only the routes at the points it attaches to,
 * old and new. A kept result replays the outcome-tracker calls it made, in the same order, so
 * policy statuses come out as a full translation's.
 */
export class ApplyMemo {
  #results = new WeakMap<Route, Applied>();
  #index: AttachmentIndex | undefined;
  #changed: ReadonlySet<string> = new Set();
  #round = 0;
  #all: { readonly routes: ReadonlyMap<string, Route>; readonly out: Map<string, Route>; readonly order: Map<string, number>; readonly callers: Map<string, readonly TrackerCall[]>; readonly byPolicy: Map<string, Set<string>>; run: number; validRound: number } | undefined;
  /**
   * What the last applyAll() + applyBinds() changed in the outcome tracker's calls: `fast` when
   * applyAll visited only patched and named routes (every other route's calls are last time's),
   * with the policies named by the calls of every result made anew (before and after) and whether
   * the binds were applied anew. Policy statuses use it to rebuild only those policies' (index.ts).
   */
  lastRun: { readonly fast: boolean; readonly policies: Set<string>; bindsFresh: boolean } = { fast: false, policies: new Set(), bindsFresh: true };
  /** The last applyBinds()'s calls (kept or made anew), for outcomes(). */
  #bindsCalls: readonly TrackerCall[] = NO_CALLS;
  /** Shared point key strings (#compact). */
  #points = new Map<string, string>();
  #binds: { readonly input: readonly Bind[]; readonly result: Bind[]; readonly calls: readonly TrackerCall[]; readonly reads: readonly string[]; round: number } | undefined;

  clear(): void {
    this.#results = new WeakMap();
    this.#points = new Map();
    this.#index = undefined;
    this.#binds = undefined;
    this.#all = undefined;
  }

  /** Called with each translation's attachment index before any apply(). */
  prepare(index: AttachmentIndex): void {
    if (this.#index === undefined) {
      this.#results = new WeakMap();
      this.#binds = undefined;
      this.#all = undefined;
    }
    // The same index object: the policy pass found every policy and target as last time (pass-memo.ts).
    this.#changed = this.#index === undefined || this.#index === index ? new Set() : index.changedSince(this.#index);
    this.#index = index;
    this.#round++;
  }

  apply(route: Route, listeners: readonly ListenerRef[], places: PolicyPlaces, tracker: RecordingTracker): Route {
    const kept = this.#results.get(route);
    if (kept && this.#current(route, kept) && (kept.listenerList === listeners || kept.listeners === listenerKeysOf(listeners)) && !this.#readsChanged(kept.reads)) {
      kept.round = this.#round;
      tracker.replay(kept.calls);
      return kept.result;
    }
    const calls: TrackerCall[] = [];
    const reads: string[] = [];
    tracker.log = calls;
    places.index.reads = reads;
    try {
      const result = applyToRoute(route, listeners, places);
      this.#results.set(route, { listenerList: listeners, listeners: listenerKeysOf(listeners), result, calls, reads: this.#compact(reads), round: this.#round });
      return result;
    } finally {
      tracker.log = undefined;
      places.index.reads = undefined;
    }
  }

  /**
   * Whether `kept` was valid in the previous round: made or found valid then, or still the output
   * for its key of an applyAll() that, in the previous round, held every output it did not visit
   * valid (its routes unchanged and none of their reads among the changed points).
   */
  #current(route: Route, kept: Applied): boolean {
    if (kept.round === this.#round - 1) return true;
    const all = this.#all;
    return all !== undefined && all.validRound === this.#round - 1 && all.out.get(route.key) === kept.result;
  }

  /**
   * apply() over every route, in order. When `routes` is the map the previous call got, changed in
   * place only at `patched` keys (route-loop.ts), and every changed attachment point (`prepare`) is
   * a route's or rule's point (read only by that route: a ProxyPolicy edit on routes), only those
   * routes and the ones those points name are visited and the previous output is changed in place:
   * an edit does not look up 10k kept results. The other routes' tracker calls are not replayed
   * into `tracker` then (`lastRun.fast`): outcomes() gives the statuses a tracker that has them.
   * Else every route is applied, in order.
   */
  applyAll(routes: ReadonlyMap<string, Route>, listenersOf: (key: string) => readonly ListenerRef[], places: PolicyPlaces, tracker: RecordingTracker, patched: { readonly keys: readonly string[] | undefined; readonly run: number } | undefined): Map<string, Route> {
    const all = this.#all;
    // The route loop's run just after the one this output was made or patched in: no patch was missed.
    const named = all !== undefined && all.routes === routes ? routesAt(this.#changed, routes) : undefined;
    if (all !== undefined && named !== undefined && patched?.keys !== undefined && patched.run === all.run + 1) {
      all.run = patched.run;
      const policies = new Set<string>();
      this.lastRun = { fast: true, policies, bindsFresh: false };
      // Callers are not visited: their calls are last time's, and outcomes() replays them for the policies whose status is rebuilt.
      const visit = [...new Set([...patched.keys, ...named])];
      for (const key of visit) {
        const route = routes.get(key) as Route;
        const result = this.apply(route, listenersOf(key), places, tracker);
        all.out.set(key, result);
        const before = all.callers.get(key);
        const calls = this.#results.get(route)?.calls ?? NO_CALLS;
        if (calls === before) continue;
        // One made anew may change the outcomes of the policies either the old or the new calls name.
        for (const call of before ?? NO_CALLS) if (call[1] !== undefined) policies.add(call[1].policy);
        for (const call of calls) if (call[1] !== undefined) policies.add(call[1].policy);
        setCalls(all, key, calls);
      }
      // Set after the visits: they checked the kept results against the previous round.
      all.validRound = this.#round;
      return all.out;
    }
    this.lastRun = { fast: false, policies: new Set(), bindsFresh: true };
    const out = new Map<string, Route>();
    const order = new Map<string, number>();
    const next = { routes, out, order, callers: new Map<string, readonly TrackerCall[]>(), byPolicy: new Map<string, Set<string>>(), run: patched?.run ?? -1, validRound: this.#round };
    for (const [key, route] of routes) {
      order.set(key, order.size);
      out.set(key, this.apply(route, listenersOf(key), places, tracker));
      setCalls(next, key, this.#results.get(route)?.calls ?? NO_CALLS);
    }
    this.#all = next;
    return out;
  }

  /**
   * The merge outcomes as a full pass records them, for the policy statuses: after a full
   * applyAll() the tracker it was given; after a fast one (callers not visited) a tracker replaying,
   * in a full pass's order — routes in route order, then the binds, then `after` (the policy
   * endpoints' calls) — the calls of the routes that name `policies` (undefined: of every route).
   * Only those policies' outcomes are complete in it.
   */
  outcomes(tracker: RecordingTracker, policies: ReadonlySet<string> | undefined, after: readonly TrackerCall[]): OutcomeTracker {
    const all = this.#all;
    if (!this.lastRun.fast || all === undefined) return tracker;
    const keys = new Set<string>();
    if (policies === undefined) for (const key of all.callers.keys()) keys.add(key);
    else for (const policy of policies) for (const key of all.byPolicy.get(policy) ?? []) keys.add(key);
    const replayed = new RecordingTracker();
    for (const key of [...keys].sort((a, b) => (all.order.get(a) as number) - (all.order.get(b) as number))) replayed.replay(all.callers.get(key) ?? NO_CALLS);
    replayed.replay(this.#bindsCalls);
    replayed.replay(after);
    return replayed;
  }

  /**
   * applyToBinds() the same way: the same input binds (binds-memo.ts keeps them while the routes'
   * attachments hold) and unchanged attachments at the Gateway, port and listener points it looked
   * up give last time's result, its tracker calls replayed.
   */
  applyBinds(binds: readonly Bind[], places: PolicyPlaces, tracker: RecordingTracker): Bind[] {
    const kept = this.#binds;
    if (kept && kept.input === binds && kept.round === this.#round - 1 && !this.#readsChanged(kept.reads)) {
      kept.round = this.#round;
      tracker.replay(kept.calls);
      this.#bindsCalls = kept.calls;
      return kept.result;
    }
    this.lastRun.bindsFresh = true;
    const calls: TrackerCall[] = [];
    const reads: string[] = [];
    tracker.log = calls;
    places.index.reads = reads;
    try {
      const result = applyToBinds(binds, places);
      this.#binds = { input: binds, result, calls, reads, round: this.#round };
      this.#bindsCalls = calls;
      return result;
    } finally {
      tracker.log = undefined;
      places.index.reads = undefined;
    }
  }

  /**
   * A result's reads as kept: each point once, and a Gateway, listener, Service or backend point
   * (read by every route on it) as one shared string per point — each route's application builds
   * its own copies (~8 point strings per route, ~5 MiB at 10k routes). A route's own route and
   * rule points are its alone and kept as they are.
   */
  #compact(reads: readonly string[]): readonly string[] {
    if (reads.length === 0) return NO_READS;
    const out: string[] = [];
    for (const key of new Set(reads)) {
      if (key.startsWith('route/') || key.startsWith('rule/')) {
        out.push(key);
        continue;
      }
      let shared = this.#points.get(key);
      if (shared === undefined) {
        // Bounded by the points of the world's Gateways, listeners, Services and backends; dropped
        // with the memo. A Map key is flattened (hashed whole), and the collector then drops the parts.
        shared = key;
        this.#points.set(key, key);
      }
      out.push(shared);
    }
    // A copy of its length: grown by push it has room for 17 (~130 bytes a route kept unused).
    return out.slice();
  }

  #readsChanged(reads: readonly string[]): boolean {
    if (this.#changed.size === 0) return false;
    for (const key of reads) if (this.#changed.has(key)) return true;
    return false;
  }
}

const NO_CALLS: readonly TrackerCall[] = [];
const NO_READS: readonly string[] = [];

/** Records a route's current calls in the applyAll() state, with the reverse index of the policies they name. */
function setCalls(all: { readonly callers: Map<string, readonly TrackerCall[]>; readonly byPolicy: Map<string, Set<string>> }, key: string, calls: readonly TrackerCall[]): void {
  for (const call of all.callers.get(key) ?? NO_CALLS) if (call[1] !== undefined) all.byPolicy.get(call[1].policy)?.delete(key);
  if (calls.length === 0) {
    all.callers.delete(key);
    return;
  }
  all.callers.set(key, calls);
  for (const call of calls) {
    if (call[1] === undefined) continue;
    let keys = all.byPolicy.get(call[1].policy);
    if (keys === undefined) all.byPolicy.set(call[1].policy, (keys = new Set()));
    keys.add(key);
  }
}


/**
 * The routes (by key) the changed points name, when every one is a route point (`route/<key>`) or a
 * rule point (`rule/<key>/<rule name>`, split at every `/` so a rule name holding one still finds
 * its route): applyToRoute reads only its own route's and rules' such points, so no other route
 * read them. Undefined when any other point changed (a Gateway, listener, Service or backend point
 * is read by many routes): every route is then applied.
 */
function routesAt(changed: ReadonlySet<string>, routes: ReadonlyMap<string, Route>): string[] | undefined {
  const named: string[] = [];
  for (const key of changed) {
    if (key.startsWith('route/')) {
      const routeKey = key.slice('route/'.length);
      if (routes.has(routeKey)) named.push(routeKey);
    } else if (key.startsWith('rule/')) {
      for (let at = key.indexOf('/', 'rule/'.length); at !== -1; at = key.indexOf('/', at + 1)) {
        const routeKey = key.slice('rule/'.length, at);
        if (routes.has(routeKey)) named.push(routeKey);
      }
    } else {
      return undefined;
    }
  }
  return named;
}

const listenerKeysOf = (listeners: readonly ListenerRef[]): string => listeners.map((l) => l.key).join('\n');
