/**
 * traffic.cors (Gateway API HTTPCORSFilter semantics). The gateway answers preflights itself
 * (OPTIONS with Origin and Access-Control-Request-Method) for allowed origins; on other requests
 * from an allowed origin the CORS response headers are added to whatever answers. Requests from
 * other origins get no CORS headers at all, so the browser refuses them; a preflight from such an
 * origin goes on to the route like any OPTIONS request.
 */
import type { CorsPolicy, Json } from '../../../../ir/policy.ts';
import type { HeaderMap } from '../../../http/headers.ts';
import type { PolicyContext } from '../../context.ts';
import { CONTINUE, respond, type PolicyResult } from '../../result.ts';
import type { StepCompiler } from '../../step.ts';
import { compileOrigins, type OriginMatcher } from './origin.ts';

/** HTTPCORSFilter's default maxAge (seconds). */
const DEFAULT_MAX_AGE = 5;

interface CompiledCors {
  readonly allowed: OriginMatcher;
  readonly anyOrigin: boolean;
  readonly credentials: boolean;
  readonly methods: readonly string[];
  readonly headers: readonly string[];
  readonly expose: string | undefined;
  readonly maxAge: string;
}

function list(value: Json | undefined, field: string): readonly string[] {
  if (value === undefined) return [];
  if (!Array.isArray(value) || !value.every((v): v is string => typeof v === 'string')) throw new Error(`cors.${field} must be a list of strings`);
  return value;
}

/**
 * Parses the member as written: the API keeps `cors` as an unchecked JSON object (HTTPCORSFilter
 * fields), so a malformed field throws here and the member fails closed.
 */
export function compileCorsConfig(config: CorsPolicy): CompiledCors {
  const origins = list(config.allowOrigins, 'allowOrigins');
  const { maxAge, allowCredentials } = config;
  if (maxAge !== undefined && (typeof maxAge !== 'number' || !Number.isInteger(maxAge) || maxAge < 0)) throw new Error('cors.maxAge must be a non-negative integer');
  if (allowCredentials !== undefined && typeof allowCredentials !== 'boolean') throw new Error('cors.allowCredentials must be a boolean');
  const expose = list(config.exposeHeaders, 'exposeHeaders');
  return {
    allowed: compileOrigins(origins),
    anyOrigin: origins.includes('*'),
    credentials: allowCredentials === true,
    methods: list(config.allowMethods, 'allowMethods'),
    headers: list(config.allowHeaders, 'allowHeaders'),
    expose: expose.length > 0 ? expose.join(', ') : undefined,
    maxAge: String(maxAge ?? DEFAULT_MAX_AGE),
  };
}

function first(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}

/** `*` is not a wildcard for credentialed requests (Fetch standard): echo what was asked instead. */
function allowList(configured: readonly string[], requested: string | undefined, credentials: boolean): string | undefined {
  if (configured.includes('*')) return credentials ? requested : '*';
  return configured.length > 0 ? configured.join(', ') : undefined;
}

function addVary(headers: HeaderMap, name: string): void {
  const prior = headers.vary;
  const text = Array.isArray(prior) ? prior.join(', ') : prior;
  if (text === undefined || text === '') headers.vary = name;
  else if (!text.toLowerCase().split(/\s*,\s*/).includes(name.toLowerCase()) && text !== '*') headers.vary = `${text}, ${name}`;
}

export function corsRequest(c: CompiledCors, ctx: PolicyContext): PolicyResult {
  const origin = first(ctx.downstreamHeaders.origin);
  if (origin === undefined) return CONTINUE;
  if (!c.allowed(origin)) return CONTINUE;
  const allowOrigin = c.anyOrigin && !c.credentials ? '*' : origin;
  const requestedMethod = first(ctx.downstreamHeaders['access-control-request-method']);
  if (ctx.method === 'OPTIONS' && requestedMethod !== undefined) {
    const headers: Record<string, string> = { 'access-control-allow-origin': allowOrigin, 'access-control-max-age': c.maxAge };
    if (allowOrigin !== '*') headers.vary = 'Origin';
    if (c.credentials) headers['access-control-allow-credentials'] = 'true';
    const methods = allowList(c.methods, requestedMethod, c.credentials);
    if (methods) headers['access-control-allow-methods'] = methods;
    const allowHeaders = allowList(c.headers, first(ctx.downstreamHeaders['access-control-request-headers']), c.credentials);
    if (allowHeaders) headers['access-control-allow-headers'] = allowHeaders;
    return respond(200, undefined, headers);
  }
  ctx.responseMutations.push((headers) => {
    headers['access-control-allow-origin'] = allowOrigin;
    if (allowOrigin !== '*') addVary(headers, 'Origin');
    if (c.credentials) headers['access-control-allow-credentials'] = 'true';
    if (c.expose) headers['access-control-expose-headers'] = c.expose;
  });
  return CONTINUE;
}

export const compileCors: StepCompiler<'cors'> = (member) => {
  const compiled = compileCorsConfig(member);
  return { member: 'cors', onRequest: (ctx) => corsRequest(compiled, ctx) };
};
