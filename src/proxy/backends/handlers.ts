import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import type { Logger } from '../../common/logger.ts';
import type { BackendPolicy } from '../../ir/policy.ts';
import type { CompiledBackendPolicy } from '../policies/backend/compile.ts';
import type { Backend } from '../../ir/types.ts';
import type { DownstreamRequest, DownstreamResponse } from '../http/downstream.ts';
import type { TunnelClient } from '../http/tunnel.ts';
import type { PolicyContext } from '../policies/context.ts';
import type { RequestLabels } from '../telemetry/metrics.ts';

/** What a backend that answers requests itself (MCP, LLM …) gets with each request. */
export interface HandlerRequest {
  readonly labels: RequestLabels;
  /** Upstream request target after URLRewrite, and headers after filters and policies. */
  readonly path: string;
  readonly headers: Readonly<Record<string, string | string[]>>;
  /**
   * Whether route filters or traffic policies may have changed `headers` (header filters or a
   * policy context exist): only then do handlers compute the policy-set header delta
   * (policies/backend/policy-headers.ts).
   */
  readonly headersMayHaveChanged?: boolean;
  /** The request's policy context when traffic policies ran (identity, buffered body, CEL input). */
  readonly policy: PolicyContext | undefined;
  /** The effective backend policy (auth, tls, http, ai, mcp …) for this rule × backend. */
  readonly backendPolicy: BackendPolicy | undefined;
  /**
   * The same policy compiled by the backend-policy layer (invalid marker, extAuth, transformation;
   * per AI provider through `subBackend`), for kinds whose upstream calls go through it (ai).
   */
  readonly backendRuntime?: CompiledBackendPolicy;
  /** Call exactly once with the status the client saw and the body bytes sent. */
  done(status: number, bytes: number): void;
}

/**
 * A backend type served in-process instead of by forwarding to endpoints. A handler lives across
 * config swaps while its backend's IR is unchanged, so per-backend state (sessions, token caches,
 * open upstream streams) survives unrelated config changes.
 */
export interface BackendHandler {
  handle(req: DownstreamRequest, res: DownstreamResponse, request: HandlerRequest): void;
  /**
   * True: the pipeline runs the request's ResponseFilters (transformation `response.body`, ext_proc
   * response phases) on what `handle` writes, except answers marked as the gateway's own
   * (pipeline/handler-response.ts). Absent: the handler's answer goes out as written.
   */
  readonly filtersResponses?: boolean;
  /**
   * True: the handler's upstream calls go through the backend-policy layer, so the rule's backend
   * policy is compiled for it and handed over as `backendRuntime` (the dynamic forward proxy).
   */
  readonly usesBackendPolicy?: boolean;
  /**
   * An HTTP/1.1 Upgrade (WebSocket) request, after routing and traffic policies; the handler owns
   * the socket from here and calls `request.done` once (101 when upgraded, else the status it
   * wrote). Handlers without it refuse upgrades.
   */
  upgrade?(req: IncomingMessage, socket: Duplex, head: Buffer, request: HandlerRequest): void;
  /**
   * A CONNECT request to `authority` (frontend `connect.mode: Route`, HTTP/1.1 or HTTP/2), after
   * routing and traffic policies: the handler owns the client, answers `200` and tunnels
   * (http/tunnel.ts `splice`), or refuses on `client.res`; `request.done` once.
   * Handlers without it refuse CONNECT.
   */
  tunnel?(authority: string, client: TunnelClient, request: HandlerRequest): void;
  close(): Promise<void>;
}

/**
 * What the runtime hands every handler factory. A backend kind that needs a runtime-wide service
 * adds it by module augmentation next to its factory (see llm/backend-handler.ts,
 * mcp/backend-handler.ts), so this contract never imports the kinds above it.
 */
export interface HandlerDeps {
  readonly logger: Logger;
}

/** Makes the handler for a backend of its type, or returns undefined when the backend is not of it. */
export type HandlerFactory = (backend: Backend, deps: HandlerDeps) => BackendHandler | undefined;

/** Handlers by backend key and IR content; unchanged backends keep their handler across swaps. */
export class BackendHandlers {
  readonly #factories: readonly HandlerFactory[];
  readonly #deps: HandlerDeps;
  readonly #handlers = new Map<string, { readonly fingerprint: string; readonly handler: BackendHandler }>();
  /** Replaced by a changed backend; closed once the swap is done. */
  #retired: BackendHandler[] = [];

  constructor(factories: readonly HandlerFactory[], deps: HandlerDeps) {
    this.#factories = factories;
    this.#deps = deps;
  }

  acquire(backend: Backend): BackendHandler | undefined {
    const fingerprint = JSON.stringify(backend);
    const known = this.#handlers.get(backend.key);
    if (known?.fingerprint === fingerprint) return known.handler;
    for (const factory of this.#factories) {
      const handler = factory(backend, this.#deps);
      if (!handler) continue;
      // The old handler of a changed backend keeps serving its in-flight requests until retainOnly.
      if (known) this.#retired.push(known.handler);
      this.#handlers.set(backend.key, { fingerprint, handler });
      return handler;
    }
    return undefined;
  }

  /** After a swap: close handlers no compiled config uses any more. */
  retainOnly(used: ReadonlySet<BackendHandler>): void {
    const closing = this.#retired.filter((h) => !used.has(h));
    this.#retired = [];
    for (const [key, entry] of this.#handlers) {
      if (used.has(entry.handler)) continue;
      this.#handlers.delete(key);
      closing.push(entry.handler);
    }
    for (const h of closing) h.close().catch((err: unknown) => this.#deps.logger.warn({ err }, 'closing a backend handler failed'));
  }

  async close(): Promise<void> {
    const all = [...this.#handlers.values()].map((e) => e.handler).concat(this.#retired);
    this.#handlers.clear();
    this.#retired = [];
    await Promise.all(all.map((h) => h.close().catch(() => undefined)));
  }
}
