import type { Listener, ProxyConfig, Route } from '../../ir/types.ts';
import type { CompiledBackend } from '../backends/backend.ts';
import { RouteTable } from '../routing/route-table.ts';
import type { ReuseMemo } from './reuse.ts';
import type { CompiledRule } from './rule.ts';
import type { SlicedJob } from './slices.ts';

/**
 * Route tables of listeners reused across config versions (issue 15: one route edit in a
 * 10k-route config). A table is a pure function of its attachments, the Route each names and the
 * compiled rule payloads (routing/route-table.ts), so it is kept per attachments array — the
 * embedded gateway keeps an unchanged Bind, and so its listeners, as the same object — and given
 * again when every payload was a kept pure rule (compile/reuse.ts), the compiled backends are those
 * of the build (then every kept rule's reads still hold) and each attachment names the same Route
 * object: the payloads are not looked up again, so an untouched listener costs one identity check
 * a route. A listener with a rule compiled per version (a rate limit, a backend policy) is rebuilt.
 */
interface KeptTable {
  readonly routes: readonly (Route | undefined)[];
  readonly table: RouteTable<CompiledRule>;
  /** What the table's build reported (bad matches, unknown routes), reported again on reuse. */
  readonly errors: readonly string[];
  /** The backend epoch (backendEpoch) the payloads were compiled or checked under. */
  readonly epoch: number;
  /** Every payload is its rule's kept compile (reuse.ts): the Route objects decide. */
  readonly pure: boolean;
  /** The kept rules' flags: one that used the per-config resources since is compiled again. */
  readonly touched: readonly { readonly value: boolean }[];
  /** Kept rules that report errors: reported once per version, as ruleOf does. */
  readonly ruleErrors: readonly { readonly ruleKey: string; readonly compiled: CompiledRule; readonly errors: readonly string[] }[];
}

const keptTables = new WeakMap<readonly Listener['routes'][number][], KeptTable>();

interface Epoch {
  readonly backends: ReadonlyMap<string, CompiledBackend>;
  readonly epoch: number;
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
  const epoch = same && last ? last.epoch : (last?.epoch ?? 0) + 1;
  epochs.set(memo, { backends, epoch });
  return epoch;
}

export interface ListenerTableContext {
  readonly config: ProxyConfig;
  readonly memo: ReuseMemo;
  readonly epoch: number;
  readonly ruleOf: (routeKey: string, index: number) => CompiledRule | undefined;
  /** Records a rule as compiled for this version; false when it already was (its errors were reported). */
  readonly claimRule: (ruleKey: string, compiled: CompiledRule) => boolean;
  readonly onError: (message: string) => void;
}

/** How many routes between slice boundaries while only identities are compared. */
const CHECKS_PER_YIELD = 256;

/**
 * A listener's route table: an earlier version's when nothing it was built from changed, else
 * built now. Only a table whose payloads were all kept pure compiles can be given again (any other
 * payload is compiled anew on every version), so a table with one is rebuilt without checking.
 */
export function* listenerTable(l: Listener, ctx: ListenerTableContext): SlicedJob<RouteTable<CompiledRule>> {
  const { config } = ctx;
  const kept = keptTables.get(l.routes);
  if (kept && kept.pure && kept.epoch === ctx.epoch && kept.touched.every((t) => !t.value)) {
    let same = true;
    for (let i = 0; i < l.routes.length && same; i++) {
      same = config.routes[(l.routes[i] as Listener['routes'][number]).routeKey] === kept.routes[i];
      if (i % CHECKS_PER_YIELD === CHECKS_PER_YIELD - 1) yield;
    }
    if (same) return reuse(kept, ctx);
  }

  // Built as before (rules compile as the table reaches their route); what it read is recorded.
  let pure = true;
  const touched: { readonly value: boolean }[] = [];
  const ruleErrors: KeptTable['ruleErrors'][number][] = [];
  const errors: string[] = [];
  const table = yield* RouteTable.build({
    attachments: l.routes,
    routes: config.routes,
    ruleOf: (route, index) => {
      const payload = ctx.ruleOf(route.key, index);
      const rule = route.rules[index];
      const memo = rule && ctx.memo.rules.get(rule);
      if (!memo || memo.compiled !== payload) pure = false;
      else if (pure) {
        touched.push(memo.touched);
        if (memo.errors.length > 0 && rule) ruleErrors.push({ ruleKey: rule.key, compiled: memo.compiled, errors: memo.errors });
      }
      return payload;
    },
    onError: (m) => {
      const message = `${l.key}: ${m}`;
      errors.push(message);
      ctx.onError(message);
    },
  });
  if (pure) keptTables.set(l.routes, { routes: l.routes.map((att) => config.routes[att.routeKey]), table, errors, epoch: ctx.epoch, pure, touched, ruleErrors });
  else keptTables.delete(l.routes);
  return table;
}

function reuse(kept: KeptTable, ctx: ListenerTableContext): RouteTable<CompiledRule> {
  for (const { ruleKey, compiled, errors } of kept.ruleErrors) {
    if (ctx.claimRule(ruleKey, compiled)) for (const m of errors) ctx.onError(m);
  }
  for (const m of kept.errors) ctx.onError(m);
  return kept.table;
}
