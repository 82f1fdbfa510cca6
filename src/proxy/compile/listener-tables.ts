import { deltaFrom } from '../../ir/config-delta.ts';
import type { Listener, ProxyConfig, Route, RouteAttachment } from '../../ir/types.ts';
import type { CompiledBackend } from '../backends/backend.ts';
import { attachmentEntries, RouteTable, type AttachedEntries, type RouteTableEntry } from '../routing/route-table.ts';
import { readKeys, readsHold, type KeptRule, type ReuseMemo } from './reuse.ts';
import type { CompiledRule } from './rule.ts';
import type { SlicedJob } from './slices.ts';

/**
 * Route tables of listeners kept across config versions (issue 15: one route edit in a 10k-route
 * config). A table is a pure function of its attachments, the Route each names and the compiled
 * rule payloads (routing/route-table.ts), so it is kept per attachments array — the embedded
 * gateway keeps an unchanged Bind, and so its listeners, as the same object — with what each
 * attachment contributed (a slot). The next version looks at each attachment: one whose Route is
 * the same object and whose payloads were all kept pure compiles (compile/reuse.ts), under the
 * same compiled backends and with no kept rule having used the per-config resources since, is
 * taken as it was without asking for its payloads (one identity check a route); any other asks
 * ruleOf again, and when its entries differ (a new match, or a payload compiled for this version:
 * a rule with per-config state) the table is changed for those routes only (RouteTable.withRoutes:
 * the old entries dropped, the new merged in order) instead of being built and sorted again. The
 * kept table of the old version is never changed: requests still on it keep it whole.
 */
interface Slot {
  readonly route: Route | undefined;
  /** undefined: the route is unknown (nothing attached). */
  readonly entries: readonly RouteTableEntry<CompiledRule>[] | undefined;
  /** Set when every payload was its rule's kept compile: the Route object (and these) decide. */
  readonly kept: readonly KeptRule[] | undefined;
  /** What building this attachment reported (unknown route, bad matches), reported again when it is taken as it was. */
  readonly errors: readonly string[];
  /** It has errors to report again (its own or a kept rule's): most have none, and are not looked at. */
  readonly replays: boolean;
}

interface KeptTable {
  readonly table: RouteTable<CompiledRule>;
  /** One per attachment, in order. */
  readonly slots: readonly Slot[];
  /** The backend epoch (backendEpoch) the payloads were compiled or checked under. */
  epoch: number;
  /**
   * The memo's touch count (reuse.ts Touched) when the slots were last checked: while it is the
   * same, no kept rule was touched since, and no slot's rules need looking at. (A slot never keeps
   * a rule that was touched when the slot was made.)
   */
  touches: number;
  /** The config the slots were last checked for: a config patched from it (config-delta.ts) names the routes that can differ. */
  checkedFor: ProxyConfig;
  /** The slots looked at every version, in order (usually none): those with errors to report again, or not kept (a rule compiled per version, an unknown route). */
  readonly revisit: readonly number[];
  /** Backend key → the slots whose kept rules read it; made when backends first change after these slots were made. */
  readers?: ReadonlyMap<string, readonly number[]>;
}

/**
 * Per memo (one per runtime: its pools and handlers), then per attachments array: two runtimes in
 * one process compiling the same IR objects (tests, a proxy restoring its last good config) never
 * take each other's tables, whose payloads hold the other's pools.
 */
const keptTablesByMemo = new WeakMap<ReuseMemo, WeakMap<readonly Listener['routes'][number][], KeptTable>>();

function keptTablesOf(memo: ReuseMemo): WeakMap<readonly Listener['routes'][number][], KeptTable> {
  let tables = keptTablesByMemo.get(memo);
  if (!tables) keptTablesByMemo.set(memo, (tables = new WeakMap()));
  return tables;
}

interface Epoch {
  readonly backends: ReadonlyMap<string, CompiledBackend>;
  readonly epoch: number;
  /** The epoch before this one and the backend keys whose compiled backend differs from it (added and removed ones too). */
  readonly changed?: BackendChanges;
}

export interface BackendChanges {
  readonly from: number;
  readonly keys: ReadonlySet<string>;
}

const epochs = new WeakMap<ReuseMemo, Epoch>();

/**
 * A number that stays the same while each compile's backends are the same compiled objects under
 * the same keys as the compile before it (then every kept rule's backend reads still hold), and
 * is new otherwise.
 */
export function backendEpoch(memo: ReuseMemo, backends: ReadonlyMap<string, CompiledBackend>): number {
  const last = epochs.get(memo);
  let same = last !== undefined && last.backends.size === backends.size;
  if (same && last) for (const [key, b] of backends) if (last.backends.get(key) !== b) { same = false; break; }
  if (same && last) {
    epochs.set(memo, { ...last, backends });
    return last.epoch;
  }
  const epoch = (last?.epoch ?? 0) + 1;
  let changed: BackendChanges | undefined;
  if (last) {
    const keys = new Set<string>();
    for (const [key, b] of backends) if (last.backends.get(key) !== b) keys.add(key);
    for (const key of last.backends.keys()) if (!backends.has(key)) keys.add(key);
    changed = { from: last.epoch, keys };
  }
  epochs.set(memo, { backends, epoch, ...(changed ? { changed } : {}) });
  return epoch;
}

/** The backend keys that changed into `epoch` from the epoch before it, when `epoch` is the memo's latest. */
export function backendChanges(memo: ReuseMemo, epoch: number): BackendChanges | undefined {
  const last = epochs.get(memo);
  return last?.epoch === epoch ? last.changed : undefined;
}

export interface ListenerTableContext {
  readonly config: ProxyConfig;
  readonly memo: ReuseMemo;
  readonly epoch: number;
  readonly ruleOf: (routeKey: string, index: number) => CompiledRule | undefined;
  /** This version's compiled backends: under a new epoch, a kept rule is taken while the ones it read are the same. */
  readonly backendOf: (key: string) => CompiledBackend | undefined;
  /** Records a rule as compiled for this version; false when it already was (its errors were reported). */
  readonly claimRule: (ruleKey: string, compiled: CompiledRule) => boolean;
  readonly onError: (message: string) => void;
}

/** How many routes between slice boundaries while only identities are compared. */
const CHECKS_PER_YIELD = 256;

/**
 * A listener's route table: an earlier version's when nothing it was built from changed, that
 * table changed for the routes whose entries did, or (no kept table, or a route attached twice)
 * built now. Rules compile as the table reaches their route.
 */
export function* listenerTable(l: Listener, ctx: ListenerTableContext): SlicedJob<RouteTable<CompiledRule>> {
  const keptTables = keptTablesOf(ctx.memo);
  const kept = keptTables.get(l.routes);
  // Taken before anything compiles: a rule touched during this compile is seen by the next one.
  const touches = ctx.memo.touches.count;
  if (!kept) {
    const slots: Slot[] = new Array<Slot>(l.routes.length);
    for (let i = 0; i < l.routes.length; i++) {
      slots[i] = slotOf(l, l.routes[i] as RouteAttachment, ctx);
      yield;
    }
    const table = yield* RouteTable.assemble(slots.map((slot, i) => attached(l.routes[i] as RouteAttachment, slot)));
    // withRoutes replaces a route's entries by its key: a route attached twice is built whole every version.
    if (new Set(l.routes.map((att) => att.routeKey)).size === l.routes.length) {
      const revisit = slots.flatMap((slot, i) => (revisited(slot) ? [i] : []));
      keptTables.set(l.routes, { table, slots, epoch: ctx.epoch, touches, checkedFor: ctx.config, revisit });
    }
    return table;
  }

  const changed: AttachedEntries<CompiledRule>[] = [];
  const sameBackends = kept.epoch === ctx.epoch;
  const anyTouched = kept.touches !== touches;
  // Copied at the first slot that changes: an untouched listener keeps its slots array.
  let slots: Slot[] | undefined;
  const asked: number[] = [];
  const { routes } = ctx.config;
  for (const i of attachmentsToCheck(l, kept, ctx, sameBackends, anyTouched)) {
    const att = l.routes[i] as RouteAttachment;
    const before = kept.slots[i] as Slot;
    if (
      routes[att.routeKey] === before.route && before.kept !== undefined
      && (!anyTouched || noneTouched(before.kept))
      // New compiled backends (an EndpointSlice changed one): the rules that read none of the changed ones stay.
      && (sameBackends || allReadsHold(before.kept, ctx.backendOf))
    ) {
      if (before.replays) replay(before, ctx);
      if (i % CHECKS_PER_YIELD === CHECKS_PER_YIELD - 1) yield;
      continue;
    }
    const slot = slotOf(l, att, ctx);
    slots ??= kept.slots.slice();
    slots[i] = slot;
    asked.push(i);
    if (slot.entries !== before.entries) changed.push({ routeKey: att.routeKey, hostnames: att.hostnames, entries: slot.entries ?? [] });
    yield;
  }
  if (!slots) {
    // Every slot as it was: the kept table, checked against every touch so far and these backends.
    kept.touches = touches;
    kept.epoch = ctx.epoch;
    kept.checkedFor = ctx.config;
    return kept.table;
  }
  const table = changed.length === 0 ? kept.table : kept.table.withRoutes(changed);
  const revisit = new Set(kept.revisit);
  for (const i of asked) {
    if (revisited(slots[i] as Slot)) revisit.add(i);
    else revisit.delete(i);
  }
  keptTables.set(l.routes, { table, slots, epoch: ctx.epoch, touches, checkedFor: ctx.config, revisit: [...revisit].sort((a, b) => a - b) });
  return table;
}

/**
 * The attachments to look at, in order: all of them, or — when the config was patched from the
 * one the slots were last checked for (config-delta.ts) and no rule was touched since — only
 * those of the routes the patch set or removed, those looked at every version, and, when the
 * compiled backends changed by one step since (backendChanges), those whose kept rules read a
 * changed backend.
 */
function attachmentsToCheck(l: Listener, kept: KeptTable, ctx: ListenerTableContext, sameBackends: boolean, anyTouched: boolean): Iterable<number> {
  if (anyTouched) return l.routes.keys();
  const changedBackends = sameBackends ? undefined : backendChanges(ctx.memo, ctx.epoch);
  if (!sameBackends && changedBackends?.from !== kept.epoch) return l.routes.keys();
  const delta = deltaFrom(ctx.config, kept.checkedFor);
  if (!delta) return l.routes.keys();
  const index = attachmentIndex(l.routes);
  const picked = new Set(kept.revisit);
  for (const keys of [delta.routesSet, delta.routesRemoved]) {
    for (const key of keys) {
      const i = index.get(key);
      if (i !== undefined) picked.add(i);
    }
  }
  if (changedBackends) {
    const readers = (kept.readers ??= readersOf(kept.slots));
    for (const key of changedBackends.keys) for (const i of readers.get(key) ?? []) picked.add(i);
  }
  return picked.size === 0 ? [] : [...picked].sort((a, b) => a - b);
}

/** Backend key → the slots whose kept rules read it (a key read and not found counts too). */
function readersOf(slots: readonly Slot[]): ReadonlyMap<string, readonly number[]> {
  const readers = new Map<string, number[]>();
  slots.forEach((slot, i) => {
    for (const k of slot.kept ?? []) {
      for (const key of readKeys(k)) {
        const list = readers.get(key);
        if (list === undefined) readers.set(key, [i]);
        else if (list[list.length - 1] !== i) list.push(i);
      }
    }
  });
  return readers;
}

// Loops, not every() with a closure: these run for each of 10k attachments when backends changed.
function noneTouched(kept: readonly KeptRule[]): boolean {
  for (const k of kept) if (k.touched.value) return false;
  return true;
}

function allReadsHold(kept: readonly KeptRule[], backendOf: (key: string) => CompiledBackend | undefined): boolean {
  for (const k of kept) if (!readsHold(k, backendOf)) return false;
  return true;
}

function revisited(slot: Slot): boolean {
  return slot.replays || slot.kept === undefined;
}

/** Route key → attachment index, once per attachments array (a kept table's routes are attached once each). */
const attachmentIndexes = new WeakMap<readonly RouteAttachment[], ReadonlyMap<string, number>>();

function attachmentIndex(attachments: readonly RouteAttachment[]): ReadonlyMap<string, number> {
  let index = attachmentIndexes.get(attachments);
  if (!index) attachmentIndexes.set(attachments, (index = new Map(attachments.map((att, i) => [att.routeKey, i]))));
  return index;
}

/** Shared by the slots without errors (nearly all: one empty array less per attachment held). */
const NO_ERRORS: readonly string[] = [];

/** What one attachment contributes, asking ruleOf for its payloads (which compiles or reuses them). */
function slotOf(l: Listener, att: RouteAttachment, ctx: ListenerTableContext): Slot {
  const route = ctx.config.routes[att.routeKey];
  const errors: string[] = [];
  let kept: KeptRule[] | undefined = [];
  const entries = attachmentEntries(att, ctx.config.routes, {
    ruleOf: (r, index) => {
      const payload = ctx.ruleOf(r.key, index);
      const rule = r.rules[index];
      const memo = rule && ctx.memo.rules.get(rule);
      if (!memo || memo.compiled !== payload) kept = undefined;
      else kept?.push(memo);
      return payload;
    },
    onError: (m) => {
      const message = `${l.key}: ${m}`;
      errors.push(message);
      ctx.onError(message);
    },
  });
  // A rule already touched is compiled again every version: its slot is asked every version.
  // slice(): exactly as long as its rules (an array grown by push keeps room for 17; one a route).
  const keptRules: readonly KeptRule[] | undefined = route && kept?.every((k) => !k.touched.value) === true ? kept.slice() : undefined;
  return { route, entries, kept: keptRules, errors: errors.length > 0 ? errors : NO_ERRORS, replays: errors.length > 0 || (keptRules?.some((k) => k.errors.length > 0) ?? false) };
}

function attached(att: RouteAttachment, slot: Slot): AttachedEntries<CompiledRule> | undefined {
  return slot.entries && { routeKey: att.routeKey, hostnames: att.hostnames, entries: slot.entries };
}

/** An attachment taken as it was reports what it reported when built: its kept rules' errors once per version (as ruleOf does), its own. */
function replay(slot: Slot, ctx: ListenerTableContext): void {
  if (slot.kept) {
    for (const k of slot.kept) if (k.errors.length > 0 && ctx.claimRule(k.compiled.key, k.compiled)) for (const m of k.errors) ctx.onError(m);
  }
  for (const m of slot.errors) ctx.onError(m);
}
