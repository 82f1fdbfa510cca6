import type { Logger } from '../../common/logger.ts';
import type { CelInput } from '../../cel/index.ts';
import type { McpFailureMode } from '../../ir/mcp.ts';
import { decodeCursor, encodeCursor } from './cursor.ts';
import { ErrorCode, McpError, type JsonRpcMessage, type JsonRpcRequest, type Params } from './jsonrpc.ts';
import { LIST_METHODS, type ItemKind, type ListMethod } from './methods.ts';
import type { Namer } from './naming.ts';
import type { ItemAuthorizer } from './request-policy.ts';
import { toClient, type PlainUriCheck } from './rewrite.ts';
import { asUpstreamError, UpstreamError, type UpstreamClient } from './upstream/client.ts';
import { matchesTemplate } from './uri-template.ts';

export interface ListEnv {
  readonly namer: Namer;
  readonly authorizer: ItemAuthorizer;
  readonly failureMode: McpFailureMode;
  readonly logger: Logger;
  readonly context?: CelInput;
  readonly sink: (message: JsonRpcMessage) => void;
  readonly signal?: AbortSignal;
  readonly plain?: PlainUriCheck;
}

/** Bounds the pages read per target when resolving an unprefixed name (prefixMode Never). */
const MAX_LOOKUP_PAGES = 20;

/** The field that names an item of a list, as the target knows it. */
function itemKeyField(method: ListMethod): 'name' | 'uri' | 'uriTemplate' {
  if (method === 'resources/list') return 'uri';
  if (method === 'resources/templates/list') return 'uriTemplate';
  return 'name';
}

interface Page {
  readonly items: readonly Record<string, unknown>[];
  readonly nextCursor?: string;
}

/** One page of one target; undefined when the target does not implement the list. */
async function pageOf(client: UpstreamClient, target: string, method: ListMethod, id: JsonRpcRequest['id'], params: Params, cursor: string | undefined, env: ListEnv): Promise<Page | undefined> {
  const { cursor: _ignored, ...rest } = params;
  const request: JsonRpcRequest = { jsonrpc: '2.0', id, method, params: cursor === undefined ? rest : { ...rest, cursor } };
  const response = await client.request(request, (m) => env.sink(toClient(target, m, env.namer, env.plain)), env.signal);
  if (response.error) {
    if (response.error.code === ErrorCode.MethodNotFound) return undefined;
    throw new UpstreamError(target, 'protocol', `${method} failed: ${response.error.message}`);
  }
  const list = response.result?.[LIST_METHODS[method].resultKey];
  const items = Array.isArray(list) ? list.filter((i): i is Record<string, unknown> => typeof i === 'object' && i !== null && !Array.isArray(i)) : [];
  const next = response.result?.nextCursor;
  return typeof next === 'string' && next !== '' ? { items, nextCursor: next } : { items };
}

/**
 * Applies the failure mode to a target's failure: rethrows (FailClosed, expired session) or logs
 * and skips. A target backend `health` evicted is skipped under either mode: eviction exists to
 * serve from the healthy targets meanwhile (docs/mcp.md "Health").
 */
function onTargetFailure(target: string, error: unknown, env: ListEnv, what: string): void {
  const failure = asUpstreamError(target, error);
  if (failure.failure === 'session_expired') throw failure;
  if (failure.failure === 'evicted') {
    env.logger.debug({ target, method: what }, 'MCP: skipping a target evicted by backend health');
    return;
  }
  if (env.failureMode === 'FailClosed') throw new McpError(ErrorCode.UpstreamFailed, `MCP target "${target}" failed`);
  env.logger.warn({ target, error: failure.message, method: what }, 'MCP FailOpen: skipping a failed target');
}

/** A merged page of `method` across the session's targets: prefixed, filtered by authorization, with a composite cursor. */
export async function listAcross(method: ListMethod, request: JsonRpcRequest, clients: ReadonlyMap<string, UpstreamClient>, env: ListEnv): Promise<Record<string, unknown>> {
  const params = request.params ?? {};
  let cursors: Readonly<Record<string, string>> | undefined;
  if (typeof params.cursor === 'string') {
    cursors = decodeCursor(params.cursor, new Set(clients.keys()));
    if (!cursors) throw new McpError(ErrorCode.InvalidParams, 'Invalid cursor');
  } else if (params.cursor !== undefined) {
    throw new McpError(ErrorCode.InvalidParams, 'Invalid cursor');
  }
  const targets = cursors ? Object.keys(cursors) : [...clients.keys()];
  const settled = await Promise.allSettled(targets.map((t) => pageOf(clients.get(t) as UpstreamClient, t, method, request.id, params, cursors?.[t], env)));

  const field = itemKeyField(method);
  const kind: ItemKind = LIST_METHODS[method].item;
  const items: Record<string, unknown>[] = [];
  const next: Record<string, string> = {};
  const seen = new Map<string, string>();
  settled.forEach((s, i) => {
    const target = targets[i];
    if (s.status === 'rejected') return onTargetFailure(target, s.reason, env, method);
    if (s.value === undefined) return;
    if (s.value.nextCursor !== undefined) next[target] = s.value.nextCursor;
    for (const item of s.value.items) {
      const upstreamName = item[field];
      if (typeof upstreamName !== 'string') continue;
      if (!env.authorizer.allows({ kind, target, name: upstreamName }, method, env.context)) continue;
      const exposed = field === 'name' ? env.namer.exposeName(target, upstreamName) : env.namer.exposeUri(target, upstreamName);
      const owner = seen.get(exposed);
      if (owner !== undefined) {
        env.logger.warn({ name: exposed, targets: [owner, target], method }, 'MCP name collision across targets (prefixMode Never): the later one is hidden; calls by this name fail');
        continue;
      }
      seen.set(exposed, target);
      items.push({ ...item, [field]: exposed });
    }
  });
  const cursor = encodeCursor(next);
  return { [LIST_METHODS[method].resultKey]: items, ...(cursor !== undefined ? { nextCursor: cursor } : {}) };
}

/** The targets with an item on `method`'s list that `matches` (bounded pages per target); a failing target is skipped under FailOpen. */
async function scanOwners(method: ListMethod, matches: (item: Record<string, unknown>) => boolean, clients: ReadonlyMap<string, UpstreamClient>, env: ListEnv): Promise<string[]> {
  const owners: string[] = [];
  await Promise.all([...clients].map(async ([target, client]) => {
    let cursor: string | undefined;
    try {
      for (let page = 0; page < MAX_LOOKUP_PAGES; page++) {
        const result = await pageOf(client, target, method, `sb-lookup-${page}`, {}, cursor, { ...env, sink: () => undefined });
        if (result === undefined) return;
        if (result.items.some(matches)) {
          owners.push(target);
          return;
        }
        if (result.nextCursor === undefined) return;
        cursor = result.nextCursor;
      }
    } catch (error) {
      onTargetFailure(target, error, env, method);
    }
  }));
  return owners.sort();
}

/**
 * prefixMode Never: the targets serving `name` (a tool or prompt). Lists every target (bounded
 * pages); a failing target is skipped under FailOpen.
 */
export function findOwners(kind: 'tool' | 'prompt', name: string, clients: ReadonlyMap<string, UpstreamClient>, env: ListEnv): Promise<string[]> {
  return scanOwners(kind === 'tool' ? 'tools/list' : 'prompts/list', (item) => item.name === name, clients, env);
}

/**
 * The targets serving a resource URI that carries no target prefix: those listing it in
 * `resources/list`, else those with a resource template it expands from.
 */
export async function findUriOwners(uri: string, clients: ReadonlyMap<string, UpstreamClient>, env: ListEnv): Promise<string[]> {
  const listing = await scanOwners('resources/list', (item) => item.uri === uri, clients, env);
  if (listing.length > 0) return listing;
  return scanOwners('resources/templates/list', (item) => typeof item.uriTemplate === 'string' && (item.uriTemplate === uri || matchesTemplate(item.uriTemplate, uri)), clients, env);
}
