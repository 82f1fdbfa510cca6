import type { IncomingHttpHeaders } from 'node:http';
import type { CelInput } from '../../../cel/index.ts';
import type { HeaderMap } from '../../http/headers.ts';
import type { PolicyContext, RequestIdentity, ResponseMutation } from '../context.ts';

/** What a unit test says about a request; everything else has a plain default. */
export interface TestRequest {
  readonly method?: string;
  readonly path?: string;
  readonly query?: string;
  readonly headers?: IncomingHttpHeaders;
  readonly body?: string;
  readonly identity?: RequestIdentity;
}

/**
 * An in-memory PolicyContext for unit tests of policy steps (no socket): the CEL view follows
 * RequestPolicyContext's so expressions see the same variables as in the proxy.
 */
export function testContext(r: TestRequest = {}): PolicyContext & { readonly identity: RequestIdentity } {
  const identity: RequestIdentity = { ...r.identity };
  const headers = r.headers ?? {};
  const body = Buffer.from(r.body ?? '');
  const upstreamHeaders: HeaderMap = {};
  const responseMutations: ResponseMutation[] = [];
  // Asserted rather than annotated: the context grows members other steps need (response filters,
  // upstream options); the defaults below cover them without tying these tests to each addition.
  const ctx = {
    method: r.method ?? 'GET',
    path: r.path ?? '/',
    query: r.query ?? '',
    host: 'gateway.test',
    scheme: 'http',
    remoteAddress: '127.0.0.1',
    remotePort: 40000,
    downstreamHeaders: headers,
    upstreamHeaders,
    identity,
    responseMutations,
    responseFilters: [],
    upstream: { delayedMs: 0 },
    onUsage: () => undefined,
    names: { gateway: 'gw', listener: 'http', route: 'route', backend: 'backend' },
    startTime: 0,
    readBody: () => Promise.resolve(body),
    replaceBody: () => undefined,
    requestBodyStream: () => null,
    onEnd: () => undefined,
    cel: (): CelInput => {
      return {
        request: { method: ctx.method, url: ctx.query === '' ? ctx.path : `${ctx.path}?${ctx.query}`, host: ctx.host, headers, body: () => body },
        source: { address: '127.0.0.1', port: 40000 },
        ...(identity.jwt ? { jwt: identity.jwt.claims } : {}),
        ...(identity.apiKey ? { apiKey: identity.apiKey } : {}),
        ...(identity.basicAuth ? { basicAuth: identity.basicAuth } : {}),
      };
    },
  } as PolicyContext;
  return ctx;
}
