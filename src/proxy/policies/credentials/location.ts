import { evalString, type Program } from '../../../cel/index.ts';
import type { CredentialLocation } from '../../../ir/policy.ts';
import { activationOf, program } from '../cel.ts';
import type { PolicyContext } from '../context.ts';

/**
 * Reads one credential from a request (SPEC.md AuthorizationExtractionLocation), shared by the
 * API key, basic and JWT authenticators. `undefined` means "no credential here": a header with
 * another scheme, an empty value or an expression that fails are all absent, so the mode decides
 * (Optional lets the request through, Strict rejects it).
 */
export type CredentialExtractor = (ctx: CredentialSource) => string | undefined;

/** What an extractor reads of a request: any PolicyContext, or a lighter view of one. */
export type CredentialSource = Pick<PolicyContext, 'downstreamHeaders' | 'query' | 'identity' | 'cel' | 'celCache'>;

/** Compiles a location once; a bad CEL expression throws, which marks the member invalid. */
export function compileCredentialExtractor(location: CredentialLocation, what: string): CredentialExtractor {
  if (location.header) return headerExtractor(location.header.name, location.header.prefix);
  if (location.queryParameter) return queryExtractor(location.queryParameter.name);
  if (location.cookie) return cookieExtractor(location.cookie.name);
  if (location.expression !== undefined) return expressionExtractor(program(location.expression, `${what}.expression`));
  throw new Error(`${what}: needs one of header, queryParameter, cookie, expression`);
}

function headerExtractor(name: string, prefix: string | undefined): CredentialExtractor {
  const header = name.toLowerCase();
  const scheme = prefix?.trim() ?? '';
  // A scheme word ("Bearer") must be followed by whitespace, so "Bearerxyz" is not a Bearer
  // credential; a prefix ending in punctuation ("token=") is followed directly by the value.
  const needsSeparator = /[A-Za-z0-9]$/.test(scheme);
  const lowerScheme = scheme.toLowerCase();
  return (ctx) => {
    const raw = ctx.downstreamHeaders[header];
    const value = Array.isArray(raw) ? raw[0] : raw;
    if (typeof value !== 'string') return undefined;
    if (scheme === '') return nonEmpty(value.trim());
    // Authentication schemes are case-insensitive (RFC 9110 §11.1).
    if (value.length <= scheme.length || value.slice(0, scheme.length).toLowerCase() !== lowerScheme) return undefined;
    const rest = value.slice(scheme.length);
    if (needsSeparator && rest[0] !== ' ' && rest[0] !== '\t') return undefined;
    return nonEmpty(rest.trim());
  };
}

function queryExtractor(name: string): CredentialExtractor {
  return (ctx) => (ctx.query === '' ? undefined : nonEmpty(new URLSearchParams(ctx.query).get(name) ?? ''));
}

function cookieExtractor(name: string): CredentialExtractor {
  return (ctx) => {
    const raw = ctx.downstreamHeaders.cookie;
    if (raw === undefined) return undefined;
    // HTTP/2 may deliver several cookie headers; each holds `a=b; c=d` pairs (RFC 6265 §4.2.1).
    for (const line of Array.isArray(raw) ? raw : [raw]) {
      for (const pair of line.split(';')) {
        const eq = pair.indexOf('=');
        if (eq < 0 || pair.slice(0, eq).trim() !== name) continue;
        const value = pair.slice(eq + 1).trim();
        return nonEmpty(value.length >= 2 && value.startsWith('"') && value.endsWith('"') ? value.slice(1, -1) : value);
      }
    }
    return undefined;
  };
}

function expressionExtractor(expression: Program): CredentialExtractor {
  return (ctx) => {
    const result = evalString(expression, activationOf(ctx));
    return result.ok ? nonEmpty(result.value) : undefined;
  };
}

function nonEmpty(value: string): string | undefined {
  return value === '' ? undefined : value;
}

/**
 * The challenge scheme a 401 names (RFC 9110 §11.6.1) when the credential travels in the
 * Authorization header with a scheme prefix; other locations have no standard scheme.
 */
export function challengeScheme(location: CredentialLocation): string | undefined {
  const header = location.header;
  if (!header || header.name.toLowerCase() !== 'authorization') return undefined;
  const scheme = header.prefix?.trim() ?? '';
  return /^[A-Za-z][A-Za-z0-9!#$%&'*+.^_`|~-]*$/.test(scheme) ? scheme : undefined;
}
