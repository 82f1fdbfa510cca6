import type { IncomingHttpHeaders } from 'node:http';
import type { BackendHandler, HandlerFactory, HandlerRequest } from '../backends/handlers.ts';
import type { DownstreamRequest as ProxyRequest, DownstreamResponse as ProxyResponse } from '../http/downstream.ts';
import { RequestPolicyContext } from '../policies/request-context.ts';
import type { DownstreamRequest, DownstreamResponse } from './downstream/io.ts';
import { createMcpHandler } from './index.ts';
import { gateUpstreamCall, type PolicyGate } from '../policies/backend/gate.ts';
import { NO_HEADER_CHANGES, policyHeaderChanges } from '../policies/backend/policy-headers.ts';
import { renderGatewayError } from '../http/error-format.ts';
import type { DirectResponse } from '../policies/result.ts';
import type { ResponseFilter } from '../policies/context.ts';
import type { HeaderMap } from '../http/headers.ts';
import type { Logger } from '../../common/logger.ts';
import { takeMessageFilters, type SseChunkRewriter } from './answer-messages.ts';
import { TargetGates } from './upstream/target-gate.ts';
import type { GatewaySessionKeys } from './session-keys.ts';

declare module '../backends/handlers.ts' {
  interface HandlerDeps {
    /** The MCP session keys of the Gateways this runtime serves, updated on each config swap. */
    readonly sessionKeys?: GatewaySessionKeys;
  }
}

/**
 * The request the MCP handler sees: the client's method and URL (legacy SSE endpoints and
 * `?sessionId=` are client-facing), the headers after route filters and traffic policies, and
 * the body a traffic policy already buffered (the stream is consumed then) or else the stream.
 */
export function mcpRequestView(req: ProxyRequest, request: Pick<HandlerRequest, 'headers' | 'policy'>): DownstreamRequest {
  const buffered = request.policy instanceof RequestPolicyContext ? request.policy.bufferedBody : undefined;
  const headers = request.headers as IncomingHttpHeaders;
  const body: AsyncIterable<Buffer | string> = buffered === undefined ? (req as AsyncIterable<Buffer | string>) : oneChunk(buffered);
  return {
    method: req.method,
    url: req.url,
    headers,
    [Symbol.asyncIterator]: () => body[Symbol.asyncIterator](),
  };
}

async function* oneChunk(body: Buffer): AsyncGenerator<Buffer> {
  if (body.length > 0) yield body;
}

/**
 * Counts what the client is sent, for the access log and metrics (`done(status, bytes)`), and
 * hands each message of an SSE answer to the response filters that work message by message
 * (answer-messages.ts); JSON answers and what other filters do are the pipeline's.
 */
export class CountingResponse implements DownstreamResponse {
  status = 200;
  bytes = 0;
  readonly #res: ProxyResponse;
  /** The request's response filters (the pipeline runs what is left in the list on the answer's bytes). */
  readonly #filters: ResponseFilter[] | undefined;
  readonly #logger: Logger | undefined;
  #rewrite: SseChunkRewriter | undefined;

  constructor(res: ProxyResponse, filters?: ResponseFilter[], logger?: Logger) {
    this.#res = res;
    this.#filters = filters;
    this.#logger = logger;
  }

  /** The next head is the gateway's own refusal or transport error, not an answer: response filters skip it. */
  gatewayAnswer(): void {
    this.#res.gatewayAnswer?.();
  }

  get headersSent(): boolean {
    return this.#res.headersSent;
  }

  get writableEnded(): boolean {
    return this.#res.writableEnded;
  }

  writeHead(status: number, headers: Record<string, string | number> = {}): unknown {
    this.status = status;
    const type = headers['content-type'];
    if (this.#filters !== undefined && this.#filters.length > 0 && this.#logger !== undefined) {
      const seen: HeaderMap = {};
      for (const [name, value] of Object.entries(headers)) seen[name.toLowerCase()] = String(value);
      // An SSE answer's messages one by one; an answer without a body (202 to a notification, a DELETE) has no message to transform.
      if (typeof type === 'string' && type.startsWith('text/event-stream')) this.#rewrite = takeMessageFilters(this.#filters, { status, headers: seen }, this.#logger);
      else if (type === undefined) takeMessageFilters(this.#filters, { status, headers: seen }, this.#logger);
    }
    return this.#res.writeHead(status, headers);
  }

  write(text: string): boolean {
    const chunk = this.#rewrite === undefined ? text : this.#rewrite(text);
    if (chunk === '') return true;
    const buffer = Buffer.from(chunk);
    this.bytes += buffer.length;
    return this.#res.write(buffer);
  }

  end(chunk?: string): unknown {
    if (chunk === undefined) return this.#res.end();
    this.bytes += Buffer.byteLength(chunk);
    return this.#res.end(chunk);
  }

  once(event: 'close', listener: () => void): unknown {
    return this.#res.on(event, listener);
  }
}

/** Serves ProxyBackends with `spec.mcp` through the MCP multiplexer, in-process. */
export const mcpHandlerFactory: HandlerFactory = (backend, deps): BackendHandler | undefined => {
  if (!backend.mcp) return undefined;
  const mcpIr = backend.mcp;
  const targetNames = mcpIr.targets.map((t) => t.name);
  const mcp = createMcpHandler(mcpIr, { logger: deps.logger, ...(deps.sessionKeys ? { gatewayKeys: deps.sessionKeys } : {}) });
  return {
    // transformation response.body and ext_proc response phases run on MCP answers (JSON ones whole, SSE ones per message: docs/mcp.md).
    filtersResponses: true,
    handle(req, res, request) {
      const counted = new CountingResponse(res, request.policy?.responseFilters, deps.logger);
      const finished = () => request.done(counted.status, counted.bytes);
      const serve = () => {
        const celContext = request.policy?.cel();
        // After the backend request steps: their header changes are part of the delta too.
        let headers = policyHeaderChanges(req.headers, request.headers, request.headersMayHaveChanged === true || request.policy !== undefined);
        // traffic.hostRewrite None: targets get the client's Host, written like a policy-set header (the target's own otherwise).
        const clientHost = request.policy?.upstream.hostRewrite === 'None' ? request.headers.host : undefined;
        if (typeof clientHost === 'string' && clientHost !== '') headers = new Map(headers).set('host', clientHost);
        const ctx = {
          ...(celContext ? { celContext } : {}),
          ...(request.backendPolicy ? { backendPolicy: request.backendPolicy } : {}),
          ...(request.policy ? { policy: request.policy } : {}),
          ...(headers.size > 0 ? { headers } : {}),
          ...(TargetGates.needed(request.backendRuntime, targetNames) ? { gates: new TargetGates(request.backendRuntime, request.policy) } : {}),
          gateway: request.labels.gateway,
        };
        return mcp.serve(mcpRequestView(req, request), counted, ctx);
      };
      const failed = (err: unknown) => {
        deps.logger.error({ err, backend: backend.key }, 'MCP handler failed');
        if (!counted.headersSent) sendRefusal(counted, { status: 500, error: { code: 'backend_policy_failed', message: 'the backend policy could not be applied' } });
        finished();
      };
      let gating: ReturnType<typeof gateTargets>;
      try {
        gating = gateTargets(request);
      } catch (err) {
        failed(err);
        return;
      }
      const proceed = (gate: PolicyGate) => {
        if (gate.kind === 'refused') {
          sendRefusal(counted, gate.response);
          finished();
          return;
        }
        serve().then(finished, failed);
      };
      if (gating instanceof Promise) gating.then(proceed, failed);
      else proceed(gating);
    },
    close: () => mcp.close(),
  };
};

/**
 * The route's backend request steps (extAuth, transformation) once per client request, before any
 * target is contacted. A target's own steps (a sectionName policy or its inline policies) run on
 * each call to that target instead (upstream/target-gate.ts), so they never refuse or rewrite
 * what goes to another target.
 */
function gateTargets(request: HandlerRequest): PolicyGate | Promise<PolicyGate> {
  const runtime = request.backendRuntime;
  // An invalid route policy is refused by the MCP handler itself (its reason logged, nothing sent).
  if (!runtime || runtime.invalid.length > 0) return PASSED;
  return gateUpstreamCall(runtime, undefined, request.policy, new Map());
}

const PASSED: PolicyGate = Object.freeze({ kind: 'passed', headers: NO_HEADER_CHANGES });

/** A refusal of the backend-policy layer: a gateway error as a JSON-RPC error (docs/errors.md), an ext_authz denial as the service wrote it. */
function sendRefusal(res: DownstreamResponse, response: DirectResponse): void {
  res.gatewayAnswer?.();
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(response.headers ?? {})) headers[name.toLowerCase()] = typeof value === 'string' ? value : value.join(', ');
  if (response.error) {
    headers['content-type'] = 'application/json';
    res.writeHead(response.status, headers);
    res.end(renderGatewayError(response.status, response.error, 'jsonrpc'));
    return;
  }
  res.writeHead(response.status, headers);
  res.end(typeof response.body === 'string' ? response.body : (response.body ?? Buffer.alloc(0)).toString('utf8'));
}
