import type { KubeObject } from '../../api/gateway/object.ts';
import type { Backend } from '../../ir/types.ts';
import type { ListenerRef } from './policy/apply.ts';
import type { RouteResult } from './route/index.ts';
import type { Attachment } from './route/parents.ts';
import { compareStrings } from './snapshot.ts';

/**
 * One HTTPRoute's translation with what translateBody() derives from it per route: its key among
 * our routes, its attachments tagged with its IR key (for the binds) and the listeners it is
 * served on (deduplicated, in key order). Built once per result, so a memoized route (route-memo.ts)
 * costs no string or array building on the next translation (issue 15), and its listener list is
 * the same array every time (the policy memos compare it by identity first).
 */
export interface RouteEntry {
  /** The result without its attachments and backends Map: the entry holds them (below) in the form they are used in, once. */
  readonly result: Pick<RouteResult, 'status' | 'route' | 'counted'>;
  /** `<namespace>/<name>` when a parentRef is ours (the result has a status). */
  readonly ourKey: string | undefined;
  readonly attachments: readonly { readonly routeKey: string; readonly attachment: Attachment }[];
  readonly listeners: readonly ListenerRef[];
  /** The result's backends as entries: walked without a Map iterator per route per translation. */
  readonly backends: readonly (readonly [string, Backend])[];
}

export function routeEntryOf(object: KubeObject, result: RouteResult): RouteEntry {
  // Joined: a flat string, not a template's tree of its parts (kept per route).
  const ourKey = result.status ? [result.status.metadata.namespace ?? '', '/', object.metadata.name].join('') : undefined;
  const route = result.route;
  const kept = { status: result.status, route, counted: result.counted };
  if (!route) return { result: kept, ourKey, attachments: [], listeners: [], backends: [] };
  return { result: kept, ourKey, attachments: result.attachments.map((attachment) => ({ routeKey: route.key, attachment })), listeners: listenersOf(result.attachments), backends: Array.from(result.backends, backendEntry) };
}

/**
 * The listeners a route is served on, deduplicated by key, in key order. A route on one listener
 * (the common case) gets that listener's one shared list: 10k routes on 10 listeners hold 10
 * lists, not 10k (a list is read only; equal lists being one object only helps the memos that
 * compare it by identity first).
 */
function listenersOf(attachments: RouteResult['attachments']): readonly ListenerRef[] {
  const first = attachments[0]?.listener;
  if (first === undefined) return NO_LISTENERS;
  if (attachments.every((a) => a.listener.key === first.key)) {
    let list = singleListener.get(first);
    if (list === undefined) singleListener.set(first, (list = [{ key: first.key, gateway: first.gateway }]));
    return list;
  }
  const listeners: ListenerRef[] = [];
  for (const attachment of attachments) {
    if (!listeners.some((l) => l.key === attachment.listener.key)) listeners.push({ key: attachment.listener.key, gateway: attachment.listener.gateway });
  }
  listeners.sort((a, b) => compareStrings(a.key, b.key));
  // Kept at its length (grown by push it has room for 17: ~130 bytes unused).
  return listeners.slice();
}

const NO_LISTENERS: readonly ListenerRef[] = Object.freeze([]);
const singleListener = new WeakMap<RouteResult['attachments'][number]['listener'], readonly ListenerRef[]>();

/**
 * One `[key, backend]` pair per Backend object under its own key: a Service's Backend is shared by
 * the routes that name it (backend.ts), and so is its pair (10k pairs of 100 backends at 10k routes).
 */
const backendEntries = new WeakMap<Backend, readonly [string, Backend]>();

function backendEntry(pair: readonly [string, Backend]): readonly [string, Backend] {
  const [key, backend] = pair;
  if (backend.key !== key) return pair;
  let kept = backendEntries.get(backend);
  if (kept === undefined) backendEntries.set(backend, (kept = pair));
  return kept;
}

/** Two routes with one key (translate() given one object twice): the union of their listeners, in key order. */
export function mergeListeners(a: readonly ListenerRef[], b: readonly ListenerRef[]): ListenerRef[] {
  const out = [...a];
  for (const l of b) if (!out.some((o) => o.key === l.key)) out.push(l);
  return out.sort((x, y) => compareStrings(x.key, y.key));
}
