/**
 * The MCP gateway: several MCP servers (targets) behind one endpoint. See docs/mcp.md.
 *
 *   const mcp = createMcpHandler(backendIR, { logger })          // once per config
 *   await mcp.handle(req, res, { celContext })                    // per request routed to the backend
 *   await mcp.close()                                             // on config swap / shutdown
 */
import type { Http2ServerRequest, Http2ServerResponse } from 'node:http2';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Logger } from '../../common/logger.ts';
import type { CelInput } from '../../cel/index.ts';
import type { McpBackendIR } from '../../ir/mcp.ts';
import type { BackendPolicy } from '../../ir/policy.ts';
import type { PolicyContext } from '../policies/context.ts';
import type { HeaderChanges } from '../policies/backend/policy-headers.ts';
import { unsupportedMembers } from '../policies/backend/support.ts';
import { renderGatewayError } from '../http/error-format.ts';
import { readMessages, sendError, sendJson, type DownstreamRequest, type DownstreamResponse } from './downstream/io.ts';
import { LegacySseDownstream } from './downstream/legacy-sse.ts';
import { StreamableDownstream } from './downstream/streamable.ts';
import { ErrorCode, errorOf } from './jsonrpc.ts';
import { classify } from './modern/envelope.ts';
import { ModernDownstream } from './modern/downstream.ts';
import { Multiplexer } from './multiplexer.ts';
import { McpRequestPolicies } from './request-policy.ts';
import { Namer } from './naming.ts';
import { SessionKeySelector, type GatewaySessionKeys } from './session-keys.ts';
import { SessionManager } from './sessions.ts';
import { UpstreamPool } from './upstream/pool.ts';
import type { UpstreamContext } from './upstream/policy.ts';
import type { TargetGates } from './upstream/target-gate.ts';

export interface McpHandlerOptions {
  readonly logger: Logger;
  /**
   * 32 bytes. Default: env `SESSION_KEY` (64 hex characters), else the key of the Gateway the
   * request came through (`gatewayKeys`), else a random per-process key (logged).
   */
  readonly sessionKey?: Buffer;
  /** The session keys of the Gateways the proxy serves (the runtime's, updated on each config swap). */
  readonly gatewayKeys?: GatewaySessionKeys;
  /** Where SESSION_KEY is read from; default process.env. */
  readonly env?: NodeJS.ProcessEnv;
}

export interface McpRequestContext {
  /** What CEL authorization rules see besides `mcp.*` (request, source, jwt, apiKey …). */
  readonly celContext?: CelInput;
  /**
   * The route's effective backend policy as the translator wrote it: `mcp` (authorization,
   * guardrails) and the connection/auth members for the backend, `subBackends[<target>]` the
   * complete policy of each target that differs. Absent: the backend IR's own policies.
   */
  readonly backendPolicy?: BackendPolicy;
  /** The request's policy context: the validated client token for `auth.passthrough`. */
  readonly policy?: PolicyContext;
  /** Headers the request's filters and policies set or removed: sent on every target call (docs/mcp.md). */
  readonly headers?: HeaderChanges;
  /** Targets' own backend request steps, run on each call to that target (upstream/target-gate.ts). */
  readonly gates?: TargetGates;
  /** The Gateway the request came through (`<namespace>/<name>`): whose session key applies. */
  readonly gateway?: string;
}

export interface McpHandler {
  /** Serves one HTTP request routed to the MCP backend; resolves when the response is complete. */
  handle(req: IncomingMessage | Http2ServerRequest, res: ServerResponse | Http2ServerResponse, ctx?: McpRequestContext): Promise<void>;
  /** The same over the minimal request/response views (a buffered body, rewritten headers, a counting response). */
  serve(req: DownstreamRequest, res: DownstreamResponse, ctx?: McpRequestContext): Promise<void>;
  /** Ends open client streams, SSE upstream streams and connection pools. */
  close(): Promise<void>;
}

export function createMcpHandler(backend: McpBackendIR, opts: McpHandlerOptions): McpHandler {
  const logger = opts.logger.child({ backend: backend.key });
  const keys = new SessionKeySelector(opts.sessionKey, opts.env ?? process.env, opts.gatewayKeys, logger);
  const namer = new Namer(backend.targets.map((t) => t.name), backend.prefixMode);
  const pool = new UpstreamPool(backend.targets);
  const sessions = new SessionManager(backend, pool, keys, logger);
  const policies = new McpRequestPolicies(backend, logger);
  const own = policies.for(undefined);
  const multiplexer = new Multiplexer(backend, namer, own.authorizer, logger, own.guardrailsFor(''));
  const deps = { sessions, multiplexer, namer, logger };
  const streamable = new StreamableDownstream(deps);
  const legacy = new LegacySseDownstream(deps);
  const stateless = new ModernDownstream(deps);

  function handle(rawReq: IncomingMessage | Http2ServerRequest, rawRes: ServerResponse | Http2ServerResponse, ctx?: McpRequestContext): Promise<void> {
    return serve(rawReq as DownstreamRequest, rawRes as unknown as DownstreamResponse, ctx);
  }

  async function serve(req: DownstreamRequest, res: DownstreamResponse, ctx?: McpRequestContext): Promise<void> {
    const context = ctx?.celContext;
    const route = ctx?.backendPolicy;
    const refusal = route ? refusalOf(route) : undefined;
    if (refusal !== undefined) {
      // Fail closed before any target is contacted: the client gets a JSON-RPC error, nothing is sent upstream.
      logger.error({ reason: refusal }, 'MCP request refused: its backend policy cannot be applied');
      res.gatewayAnswer?.();
      res.writeHead(500, { 'content-type': 'application/json' });
      res.end(renderGatewayError(500, { code: 'policy_invalid', message: 'a backend policy that applies to this route is invalid' }, 'jsonrpc'));
      return;
    }
    const upstream: UpstreamContext = { ...(route ? { backendPolicy: route } : {}), ...(ctx?.policy ? { policy: ctx.policy } : {}), ...(ctx?.headers ? { headers: ctx.headers } : {}), ...(ctx?.gates ? { gates: ctx.gates } : {}), ...(ctx?.gateway !== undefined ? { gateway: ctx.gateway } : {}), mcp: policies.for(route) };
    const hasSession = typeof req.headers['mcp-session-id'] === 'string';
    try {
      switch (req.method) {
        case 'POST': {
          const legacyId = hasSession ? null : new URL(req.url ?? '/', 'http://gateway').searchParams.get('sessionId');
          if (legacyId !== null) return await legacy.post(req, res, legacyId, context, upstream);
          return await postByEra(req, res, context, upstream);
        }
        case 'GET':
          // Streamable HTTP's GET always names its session; a GET without one opens a legacy SSE session.
          return await (hasSession ? streamable.get(req, res, upstream) : legacy.open(req, res));
        case 'DELETE':
          return await streamable.delete(req, res, upstream);
        default:
          return sendError(res, 405, ErrorCode.InvalidRequest, 'Method not allowed', { allow: 'GET, POST, DELETE' });
      }
    } catch (error) {
      logger.error({ err: error }, 'MCP handler failed');
      if (!res.headersSent) sendError(res, 500, ErrorCode.InternalError, 'Internal error');
      else if (!res.writableEnded) res.end();
    }
  }

  /** Streamable HTTP POSTs of both eras share the endpoint; the body's `_meta` envelope decides. */
  async function postByEra(req: DownstreamRequest, res: DownstreamResponse, context: CelInput | undefined, upstream: UpstreamContext): Promise<void> {
    const body = await readMessages(req);
    if (!body.ok) return sendError(res, body.status, body.code, body.message);
    const eras = body.messages.map((m) => classify(m, req.headers));
    const refusal = eras.find((e) => e.era === 'rejected');
    if (refusal?.era === 'rejected') return sendJson(res, refusal.status, errorOf(null, refusal.code, refusal.message, refusal.data));
    const modern = eras.find((e) => e.era === 'modern');
    if (modern?.era !== 'modern') return streamable.post(req, res, context, upstream, body);
    if (body.batch) return sendError(res, 400, ErrorCode.InvalidRequest, 'The 2026-07-28 revision does not accept batches');
    return stateless.post(body.messages[0], modern.envelope, req, res, context, upstream);
  }

  async function close(): Promise<void> {
    await legacy.close();
    await sessions.close();
    await pool.close();
    policies.close();
  }

  return { handle, serve, close };
}

/**
 * Why a request under this route-level backend policy must not reach any target: an invalid
 * policy, or a member no upstream call can apply yet (backend extAuth, some auth mechanisms). A
 * problem of one target's own policy only fails that target (FailClosed/FailOpen decide).
 */
function refusalOf(route: BackendPolicy): string | undefined {
  const problems = [...(route.invalid ?? []).map((i) => `${i.source}: ${i.message}`), ...unsupportedMembers(route).map((u) => u.message)];
  return problems.length > 0 ? problems.join('; ') : undefined;
}

export type { McpBackendIR, McpTargetIR } from '../../ir/mcp.ts';
export type { DownstreamRequest as McpRequestView, DownstreamResponse as McpResponseView } from './downstream/io.ts';
