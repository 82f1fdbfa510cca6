import { respondError, type PolicyResult } from '../result.ts';

/**
 * The 401 every authenticator answers with: the gateway's JSON error body plus, when the scheme
 * is known, the `WWW-Authenticate` challenge RFC 9110 §15.5.2 asks for.
 */
export function unauthorized(message: string, challenge?: string): PolicyResult {
  return respondError(401, 'unauthorized', message, challenge === undefined ? undefined : { 'www-authenticate': challenge });
}

/** A quoted-string (RFC 9110 §5.6.4) for challenge parameters such as realm. */
export function quoted(value: string): string {
  return `"${value.replace(/["\\]/g, '\\$&')}"`;
}
