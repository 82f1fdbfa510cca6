import type { Logger } from '../../common/logger.ts';
import type { McpFailureMode, McpTargetIR } from '../../ir/mcp.ts';
import { ErrorCode, McpError, type JsonRpcRequest, type Params } from './jsonrpc.ts';
import { asUpstreamError, evictedError, type UpstreamClient, type UpstreamError } from './upstream/client.ts';
import type { UpstreamPool } from './upstream/pool.ts';
import type { UpstreamContext } from './upstream/policy.ts';

/** The newest protocol revision with sessions; what the gateway asks for when it initialises on its own. */
export const LATEST_SESSION_PROTOCOL = '2025-11-25';
export const GATEWAY_VERSION = '0.1.0';

export interface JoinedTarget {
  readonly client: UpstreamClient;
  readonly result: Record<string, unknown>;
}

/**
 * Initialises one target: `initialize`, then `notifications/initialized`. A Service target with
 * endpoints is initialised on `endpoint` when given, else on the next endpoint in turn.
 */
export async function initializeTarget(
  pool: UpstreamPool, target: McpTargetIR, clientParams: Params, signal?: AbortSignal, endpoint?: string, ctx?: UpstreamContext,
): Promise<JoinedTarget> {
  const client = await pool.fresh(target, signal, endpoint ?? pool.pick(target, ctx), ctx);
  try {
    const request: JsonRpcRequest = { jsonrpc: '2.0', id: 'sb-initialize', method: 'initialize', params: clientParams };
    const response = await client.request(request, () => undefined, signal);
    if (response.error || !response.result) throw new Error(`initialize failed: ${response.error?.message ?? 'no result'}`);
    const version = response.result.protocolVersion;
    client.protocolVersion = typeof version === 'string' ? version : undefined;
    await client.send({ jsonrpc: '2.0', method: 'notifications/initialized' }, signal);
    return { client, result: response.result };
  } catch (error) {
    await client.close();
    throw asUpstreamError(target.name, error);
  }
}

/**
 * Initialises every target in parallel. FailClosed: any failure fails the whole initialize
 * (sessions already opened are closed). FailOpen: failed targets are logged and left out; at
 * least one must join.
 */
export async function initializeAll(
  pool: UpstreamPool, targets: readonly McpTargetIR[], clientParams: Params, failureMode: McpFailureMode, logger: Logger, signal?: AbortSignal, ctx?: UpstreamContext,
): Promise<Map<string, JoinedTarget>> {
  const settled = await Promise.allSettled(targets.map((t) => initializeTarget(pool, t, clientParams, signal, undefined, ctx)));
  const joined = new Map<string, JoinedTarget>();
  const failed: { target: string; error: string }[] = [];
  const evicted: UpstreamError[] = [];
  settled.forEach((s, i) => {
    if (s.status === 'fulfilled') return void joined.set(targets[i].name, s.value);
    const failure = asUpstreamError(targets[i].name, s.reason);
    // Evicted targets (backend health) are left out under either failure mode; nothing was sent to them.
    if (failure.failure === 'evicted') evicted.push(failure);
    else failed.push({ target: targets[i].name, error: failure.message });
  });
  if (evicted.length > 0) logger.info({ evicted: evicted.map((e) => e.target) }, 'MCP initialize: leaving out targets evicted by backend health');
  if (failed.length === 0 && joined.size === 0 && evicted.length > 0) {
    const error = evictedError(evicted[0]);
    throw new McpError(error.code, `every MCP target is evicted by backend health: ${evicted.map((e) => e.target).join(', ')}`, error.data);
  }
  if (failed.length === 0) return joined;
  if (failureMode === 'FailClosed' || joined.size === 0) {
    await Promise.all([...joined.values()].map((j) => j.client.close()));
    logger.warn({ failed }, 'MCP initialize failed: a target is unavailable');
    throw new McpError(ErrorCode.UpstreamFailed, `MCP target${failed.length > 1 ? 's' : ''} unavailable: ${failed.map((f) => f.target).join(', ')}`);
  }
  logger.warn({ skipped: failed }, 'MCP FailOpen: serving the session without failed targets');
  return joined;
}

/** Capability members the gateway can multiplex; others (tasks, experimental) are not offered. */
const MERGED_CAPABILITIES = ['tools', 'prompts', 'resources', 'logging', 'completions'] as const;

/**
 * One initialize result for the client: the capabilities any target offers (flags OR-ed), the
 * oldest protocol version among the targets (every target accepts it; the gateway keeps talking
 * to each target in its own negotiated version), instructions labelled per target.
 */
export function mergeInitialize(joined: ReadonlyMap<string, JoinedTarget>, serverName: string): Record<string, unknown> {
  const capabilities: Record<string, Record<string, unknown>> = {};
  const instructions: string[] = [];
  let version: string | undefined;
  for (const [name, { result }] of joined) {
    const caps = isRecord(result.capabilities) ? result.capabilities : {};
    for (const key of MERGED_CAPABILITIES) {
      const offered = caps[key];
      if (!isRecord(offered)) continue;
      const merged = (capabilities[key] ??= {});
      for (const [flag, value] of Object.entries(offered)) merged[flag] = merged[flag] === true || value;
    }
    if (typeof result.instructions === 'string' && result.instructions.trim() !== '') instructions.push(`## ${name}\n\n${result.instructions.trim()}`);
    const pv = result.protocolVersion;
    if (typeof pv === 'string' && (version === undefined || pv < version)) version = pv;
  }
  return {
    protocolVersion: version ?? LATEST_SESSION_PROTOCOL,
    capabilities,
    serverInfo: { name: serverName, version: GATEWAY_VERSION },
    ...(instructions.length > 0 ? { instructions: instructions.join('\n\n') } : {}),
  };
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
