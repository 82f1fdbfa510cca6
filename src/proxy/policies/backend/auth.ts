import type { BackendAuthPolicy, CredentialLocation } from '../../../ir/policy.ts';
import type { RequestIdentity } from '../context.ts';

type Headers = Record<string, string | string[]>;

/** SPEC.md: credentials go to `Authorization: Bearer <value>` unless a location says otherwise. */
export const DEFAULT_CREDENTIAL_LOCATION: CredentialLocation = { header: { name: 'Authorization', prefix: 'Bearer ' } };

/**
 * Writes the backend's credentials into an upstream request: the primary one (`key`, a resolved
 * `secretRef`, or with `passthrough` the client token a client-auth step validated) at
 * `location`, then every extra `credentials[]` entry at its own location. Pure: returns new
 * headers and path and never changes its inputs. Passthrough without a validated client token
 * writes nothing (SPEC.md: no effect without client-auth policies).
 */
export function applyBackendCredentials(
  headers: Readonly<Headers>,
  path: string,
  auth: BackendAuthPolicy,
  identity: Readonly<RequestIdentity>,
): { headers: Headers; path: string } {
  let out = { headers: { ...headers }, path };
  const primary = auth.key ?? (auth.passthrough !== undefined ? identity.passthroughToken : undefined);
  if (primary !== undefined) out = writeCredential(out.headers, out.path, auth.location ?? DEFAULT_CREDENTIAL_LOCATION, primary);
  for (const extra of auth.credentials ?? []) out = writeCredential(out.headers, out.path, extra.location, extra.value);
  return out;
}

/** Writes one credential at a location, replacing what the client sent there. Mutates `headers`. */
export function writeCredential(headers: Headers, path: string, location: CredentialLocation, value: string): { headers: Headers; path: string } {
  if (location.header) {
    headers[location.header.name.toLowerCase()] = `${location.header.prefix ?? ''}${value}`;
    return { headers, path };
  }
  if (location.queryParameter) return { headers, path: withQueryParameter(path, location.queryParameter.name, value) };
  if (location.cookie) {
    headers.cookie = withCookie(headers.cookie, location.cookie.name, value);
    return { headers, path };
  }
  // An extraction-only location (expression) cannot be written to: that is a config error.
  throw new Error('a backend credential location must be a header, query parameter or cookie');
}

function withQueryParameter(path: string, name: string, value: string): string {
  const q = path.indexOf('?');
  const base = q < 0 ? path : path.slice(0, q);
  const params = new URLSearchParams(q < 0 ? '' : path.slice(q + 1));
  params.set(name, value);
  return `${base}?${params.toString()}`;
}

function withCookie(existing: string | string[] | undefined, name: string, value: string): string {
  const joined = Array.isArray(existing) ? existing.join('; ') : (existing ?? '');
  const kept = joined.split(';').map((c) => c.trim()).filter((c) => c !== '' && c.split('=')[0] !== name);
  kept.push(`${name}=${encodeURIComponent(value)}`);
  return kept.join('; ');
}
