/**
 * traffic.csrf, SPEC.md's algorithm (the one Go's net/http CrossOriginProtection uses):
 *   1. GET, HEAD and OPTIONS pass;
 *   2. Sec-Fetch-Site `same-origin` or `none` passes; any other value is rejected unless the
 *      Origin is one of `additionalOrigins`;
 *   3. without Sec-Fetch-Site: no Origin passes (not a browser request); an Origin whose host
 *      equals the Host header passes; a trusted additional origin passes; anything else is 403.
 */
import type { PolicyContext } from '../../context.ts';
import { CONTINUE, respondError, type PolicyResult } from '../../result.ts';
import type { StepCompiler } from '../../step.ts';

const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

const REJECTED = respondError(403, 'csrf_rejected', 'cross-origin request rejected');

function header(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}

/** `scheme://host[:port]` → `host[:port]` lowercased, or undefined when it is not an origin. */
function originHost(origin: string): string | undefined {
  try {
    const url = new URL(origin);
    return url.host === '' ? undefined : url.host.toLowerCase();
  } catch {
    return undefined;
  }
}

export function checkCsrf(trusted: ReadonlySet<string>, ctx: PolicyContext): PolicyResult {
  if (SAFE_METHODS.has(ctx.method)) return CONTINUE;
  const origin = header(ctx.downstreamHeaders.origin);
  const isTrusted = () => origin !== undefined && trusted.has(origin.toLowerCase());
  const site = header(ctx.downstreamHeaders['sec-fetch-site']);
  if (site !== undefined && site !== '') {
    if (site === 'same-origin' || site === 'none') return CONTINUE;
    return isTrusted() ? CONTINUE : REJECTED;
  }
  if (origin === undefined || origin === '') return CONTINUE;
  const host = header(ctx.downstreamHeaders[':authority'] as string | undefined) ?? header(ctx.downstreamHeaders.host);
  if (host !== undefined && originHost(origin) === host.toLowerCase()) return CONTINUE;
  return isTrusted() ? CONTINUE : REJECTED;
}

export const compileCsrf: StepCompiler<'csrf'> = (member) => {
  const trusted = new Set((member.additionalOrigins ?? []).map((o) => o.toLowerCase().replace(/\/+$/, '')));
  return { member: 'csrf', onRequest: (ctx) => checkCsrf(trusted, ctx) };
};
