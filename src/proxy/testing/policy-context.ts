/**
 * An in-memory PolicyContext for unit tests of traffic steps (no socket). It behaves like
 * RequestPolicyContext where steps can tell: the CEL view, body buffering and replacement,
 * response mutations and filters, upstream options and usage listeners.
 */
import type { IncomingHttpHeaders } from 'node:http';
import type { CelInput } from '../../cel/index.ts';
import type { HeaderMap } from '../http/headers.ts';
import type { PolicyContext, RequestIdentity, ResponseFilter, ResponseMutation, TokenUsage, UpstreamRequestOptions } from '../policies/context.ts';

export interface FakeRequest {
  readonly method?: string;
  readonly path?: string;
  readonly query?: string;
  readonly host?: string;
  readonly headers?: IncomingHttpHeaders;
  readonly body?: string;
}

export interface FakePolicyContext extends PolicyContext {
  /** The body the upstream would receive (undefined: the original stream, untouched). */
  readonly sentBody: Buffer | undefined;
  reportUsage(usage: TokenUsage): void;
  /** Runs the registered response mutations on `headers` as the Exchange would. */
  respondWith(status: number, headers?: HeaderMap): HeaderMap;
  /** Ends the request as handle-request does: runs the end listeners once. */
  end(): void;
}

export function fakePolicyContext(r: FakeRequest = {}): FakePolicyContext {
  const headers: IncomingHttpHeaders = { host: r.host ?? 'gateway.test', ...r.headers };
  const original = r.body === undefined ? undefined : Buffer.from(r.body);
  const identity: RequestIdentity = {};
  const responseMutations: ResponseMutation[] = [];
  const responseFilters: ResponseFilter[] = [];
  const upstream: UpstreamRequestOptions = { delayedMs: 0 };
  const usage: ((u: TokenUsage) => void)[] = [];
  const upstreamHeaders: HeaderMap = {};
  for (const [name, value] of Object.entries(headers)) if (value !== undefined) upstreamHeaders[name] = value;
  let body: Buffer | undefined;
  const endListeners: (() => void)[] = [];
  let ended = false;
  const ctx: FakePolicyContext = {
    method: r.method ?? 'GET',
    path: r.path ?? '/',
    query: r.query ?? '',
    host: (r.host ?? 'gateway.test').replace(/:\d+$/, ''),
    scheme: 'http',
    remoteAddress: '127.0.0.1',
    remotePort: 40000,
    downstreamHeaders: headers,
    upstreamHeaders,
    identity,
    responseMutations,
    responseFilters,
    upstream,
    names: { gateway: 'default/gw', listener: 'http', route: 'default/route', backend: 'svc' },
    startTime: 0,
    get sentBody() {
      return body;
    },
    readBody() {
      body ??= original ?? Buffer.alloc(0);
      return Promise.resolve(body);
    },
    replaceBody(b) {
      body = b;
      upstreamHeaders['content-length'] = String(b.length);
    },
    requestBodyStream() {
      if (upstream.bodyStream) return upstream.bodyStream;
      const current = body ?? original;
      if (current === undefined || current.length === 0) return null;
      return (async function* () {
        yield current;
      })();
    },
    onEnd(listener) {
      if (ended) listener();
      else endListeners.push(listener);
    },
    end() {
      if (ended) return;
      ended = true;
      for (const listener of endListeners) listener();
    },
    cel(): CelInput {
      const url = ctx.query === '' ? ctx.path : `${ctx.path}?${ctx.query}`;
      return {
        request: { method: ctx.method, url, host: ctx.host, scheme: 'http', version: 'HTTP/1.1', headers, body: () => body ?? new Uint8Array(0), startTime: 0 },
        source: { address: '127.0.0.1', port: 40000 },
        ...(identity.jwt ? { jwt: identity.jwt.claims } : {}),
        ...(identity.apiKey ? { apiKey: identity.apiKey } : {}),
        ...(identity.basicAuth ? { basicAuth: identity.basicAuth } : {}),
        ...(identity.extauthz ? { extauthz: identity.extauthz } : {}),
        ...(identity.extproc ? { extproc: identity.extproc } : {}),
        route: { name: ctx.names.route },
        gateway: { name: ctx.names.gateway },
        backend: { name: ctx.names.backend },
      };
    },
    onUsage: (listener) => void usage.push(listener),
    reportUsage: (u) => usage.forEach((l) => l(u)),
    respondWith(status, responseHeaders = {}) {
      for (const mutate of responseMutations) mutate(responseHeaders, status);
      return responseHeaders;
    },
  };
  return ctx;
}
