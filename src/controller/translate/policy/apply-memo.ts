import type { Route } from '../../../ir/types.ts';
import type { ListenerRef, PolicyPlaces } from './apply.ts';
import { applyToRoute } from './apply.ts';
import { OutcomeTracker, type TargetHandle } from './merge.ts';
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
}

/**
 * applyToRoute() results kept between translations (issue 15), by IR Route object (the route
 * memo keeps unchanged routes' objects). A result holds while the policies and everything but
 * routes are unchanged (the owner calls `clear()` otherwise) and every policy resolves to the same
 * targets and points (`prepare` compares a signature of them: a route added or removed can shift
 * a policy's target indexes). A kept result replays the outcome-tracker calls it made, in the
 * same order, so policy statuses come out as a full translation's.
 */
export class ApplyMemo {
  #results = new WeakMap<Route, Applied>();
  #signature: string | undefined;

  clear(): void {
    this.#results = new WeakMap();
    this.#signature = undefined;
  }

  /** `signature` describes every policy's resolved targets and points; a different one drops everything. */
  prepare(signature: string): void {
    if (signature !== this.#signature) this.#results = new WeakMap();
    this.#signature = signature;
  }

  apply(route: Route, listeners: readonly ListenerRef[], places: PolicyPlaces, tracker: RecordingTracker): Route {
    const kept = this.#results.get(route);
    if (kept && kept.listenerList === listeners) {
      tracker.replay(kept.calls);
      return kept.result;
    }
    const listenerKeys = listeners.map((l) => l.key).join('\n');
    if (kept && kept.listeners === listenerKeys) {
      tracker.replay(kept.calls);
      return kept.result;
    }
    const calls: TrackerCall[] = [];
    tracker.log = calls;
    try {
      const result = applyToRoute(route, listeners, places);
      this.#results.set(route, { listenerList: listeners, listeners: listenerKeys, result, calls });
      return result;
    } finally {
      tracker.log = undefined;
    }
  }
}
