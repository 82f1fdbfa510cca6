/**
 * External authorization over plain HTTP: the gateway sends a request (path, headers and body
 * chosen by the policy) to the service; 200 authorizes, anything else denies — with a redirect
 * when `http.redirect` is set, otherwise with the service's status and body.
 */
import { request as httpRequest } from 'undici';
import { createActivation, evalBody, evalString } from '../../../cel/index.ts';
import type { Activation, Program } from '../../../cel/index.ts';
import type { JsonObject } from '../../../ir/policy.ts';
import { readTextBounded } from '../../http/body.ts';
import { deadlineCause, httpCallFailure, shortCause } from '../call-failure.ts';
import { TargetAgents } from '../connections.ts';
import { baseUrl, withUrlFallback, type ServiceTargets } from '../endpoint.ts';
import { compileExpression, compileMap, evalStrings, evalValues } from '../expressions.ts';
import { headerPairs, type HeaderPair } from '../headers.ts';
import {
  bodyTooLarge, DEFAULT_TIMEOUT_MS, unavailable,
  type AuthzDecision, type DownstreamRequest, type ExtAuthConfig, type ExtAuthzClient, type ExtAuthzOptions,
} from './types.ts';

/** Headers of a denial passed back to the client (the rest describe the service's own connection). */
const DENIAL_HEADERS = new Set(['content-type', 'www-authenticate', 'set-cookie', 'location', 'cache-control']);
/**
 * The service's answer is read up to this size; auth denials are small. A larger answer counts as
 * the service failing: FailClosed denies (403), FailOpen lets the request through.
 */
const MAX_RESPONSE_BYTES = 64 * 1024;

export class HttpExtAuthzClient implements ExtAuthzClient {
  readonly bodyLimit?: number;
  readonly #config: ExtAuthConfig;
  /** The service's targets (a backend's ready endpoints), one per check in turn, each with its pool. */
  readonly #targets: ServiceTargets;
  #agents: TargetAgents | undefined;
  readonly #timeoutMs: number;
  readonly #path?: Program;
  readonly #redirect?: Program;
  readonly #body?: Program;
  readonly #allowedRequestHeaders: ReadonlySet<string>;
  readonly #allowedResponseHeaders: ReadonlySet<string>;
  readonly #addRequestHeaders: ReadonlyMap<string, Program>;
  readonly #responseMetadata: ReadonlyMap<string, Program>;

  constructor(config: ExtAuthConfig, options: ExtAuthzOptions = {}) {
    const http = config.http ?? {};
    this.#config = config;
    if (config.forwardBody) this.bodyLimit = config.forwardBody.maxSize;
    this.#targets = withUrlFallback(options.resolve)(config);
    this.#timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    if (http.path) this.#path = compileExpression(http.path, 'extAuth.http.path');
    if (http.redirect) this.#redirect = compileExpression(http.redirect, 'extAuth.http.redirect');
    if (http.body) this.#body = compileExpression(http.body, 'extAuth.http.body');
    this.#allowedRequestHeaders = new Set((http.allowedRequestHeaders ?? ['Authorization']).map((h) => h.toLowerCase()));
    this.#allowedResponseHeaders = new Set((http.allowedResponseHeaders ?? []).map((h) => h.toLowerCase()));
    this.#addRequestHeaders = compileMap(http.addRequestHeaders, 'extAuth.http.addRequestHeaders');
    this.#responseMetadata = compileMap(http.responseMetadata, 'extAuth.http.responseMetadata');
    // Last: a compile error above must not leave a connection pool behind.
    this.#agents = new TargetAgents(this.#targets.all, options.connections);
  }

  async check(request: DownstreamRequest, activation: Activation, signal?: AbortSignal): Promise<AuthzDecision> {
    if (this.bodyLimit !== undefined && request.body !== undefined && request.body.length > this.bodyLimit) return bodyTooLarge(this.bodyLimit);
    const path = this.#path ? evalString(this.#path, activation) : { ok: true as const, value: request.url };
    // A path expression that fails leaves the service unreachable for this request.
    if (!path.ok) return unavailable(this.#config.failureMode, shortCause(`the path expression failed: ${path.error}`));
    const body = this.#requestBody(request, activation);
    const headers: Record<string, string | string[]> = {};
    for (const [name, value] of headerPairs(request.headers)) {
      if (!this.#allowedRequestHeaders.has(name)) continue;
      const existing = headers[name];
      headers[name] = existing === undefined ? value : [...(Array.isArray(existing) ? existing : [existing]), value];
    }
    for (const [name, value] of evalStrings(this.#addRequestHeaders, activation)) headers[name.toLowerCase()] = value;
    const timeout = AbortSignal.timeout(this.#timeoutMs);
    try {
      const target = this.#targets.next();
      if (!this.#agents) throw new Error('closed');
      const response = await httpRequest(`${baseUrl(target)}${path.value.startsWith('/') ? '' : '/'}${path.value}`, {
        dispatcher: this.#agents.get(target),
        // Keep the method unless a body is sent: GET and HEAD cannot carry one.
        method: body !== undefined && (request.method === 'GET' || request.method === 'HEAD') ? 'POST' : request.method,
        headers,
        body,
        signal: signal ? AbortSignal.any([signal, timeout]) : timeout,
      });
      const text = await readTextBounded(response.body, MAX_RESPONSE_BYTES, { what: 'authorization response' });
      const responseHeaders = headerPairs(response.headers as Record<string, string | string[] | undefined>);
      if (response.statusCode === 200) return this.#allow(responseHeaders, text, activation);
      return this.#deny(response.statusCode, text, responseHeaders, activation);
    } catch (err) {
      return unavailable(this.#config.failureMode, timeout.aborted ? deadlineCause(this.#timeoutMs) : httpCallFailure(err));
    }
  }

  #requestBody(request: DownstreamRequest, activation: Activation): string | Uint8Array | undefined {
    if (this.#body) {
      const result = evalBody(this.#body, activation);
      return result.ok ? result.value : undefined;
    }
    return this.bodyLimit !== undefined ? request.body : undefined;
  }

  #allow(responseHeaders: readonly HeaderPair[], body: string, activation: Activation): AuthzDecision {
    const copied = responseHeaders.filter(([name]) => this.#allowedResponseHeaders.has(name));
    let metadata: JsonObject = {};
    if (this.#responseMetadata.size > 0) {
      const withResponse = { ...activation, response: createActivation({ response: { code: 200, headers: Object.fromEntries(responseHeaders), body } }).response } as Activation;
      metadata = evalValues(this.#responseMetadata, withResponse) as JsonObject;
    }
    return { allowed: true, requestHeaders: { set: copied, add: [], remove: [] }, responseHeaders: [], metadata };
  }

  #deny(status: number, body: string, responseHeaders: readonly HeaderPair[], activation: Activation): AuthzDecision {
    if (this.#redirect) {
      const location = evalString(this.#redirect, activation);
      if (location.ok) return { allowed: false, status: 302, body: '', headers: [['location', location.value]], reason: 'denied' };
    }
    return {
      allowed: false,
      status: status >= 400 && status <= 599 ? status : 403,
      body,
      headers: responseHeaders.filter(([name]) => DENIAL_HEADERS.has(name)),
      reason: 'denied',
    };
  }

  close(): void {
    this.#agents?.close();
    this.#agents = undefined;
  }
}

