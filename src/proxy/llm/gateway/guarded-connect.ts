/**
 * The SSRF guard at connect time for providers the translator marks `guardAddresses` (a
 * ProxyModel's vendor address or `baseURL`, docs/models.md): the translator refuses a baseURL
 * that *names* a loopback, link-local, unspecified or metadata address; this refuses one whose
 * name *resolves* to such an address when the connection is made. It reuses the dynamic forward
 * proxy's checked resolver and address classes (backends/dynamic-forward): every answer of the
 * name is checked (a mixed answer is refused whole) and the connection goes to the checked
 * address itself, never to a second resolution of the name, so DNS rebinding cannot slip past.
 * TLS keeps the name for SNI and the certificate check. Fails closed: a name that does not resolve
 * is refused like a blocked one. Only guarded providers' pools are built with it: no other
 * connection pays for the look-up.
 */
import { isIP } from 'node:net';
import { buildConnector } from 'undici';
import type { AddressClass } from '../../backends/dynamic-forward/address-classes.ts';
import { CheckedResolver } from '../../backends/dynamic-forward/resolver.ts';

/** No class is allowed: SPEC.md exempts only Custom models on a backendRef, which are not guarded. */
const NOTHING_ALLOWED: ReadonlySet<AddressClass> = new Set();

/** Shared by every guarded pool: at most DNS_CACHE_MAX_ENTRIES names for DNS_CACHE_TTL_MS each (docs/security.md). */
const sharedResolver = new CheckedResolver();

/** The connection was refused before it was made: nothing reached the provider. */
export class AddressRefusedError extends Error {
  readonly code = 'ERR_PROVIDER_ADDRESS_REFUSED';
}

/** `inner` (undici's default connector, or a backend policy's) behind the address check. */
export function guardedConnector(inner: buildConnector.connector = buildConnector({}), resolver: CheckedResolver = sharedResolver): buildConnector.connector {
  return (opts, callback) => {
    // An IPv6 literal reaches the connector in brackets, as a URL writes it.
    const name = opts.hostname.startsWith('[') ? opts.hostname.slice(1, -1) : opts.hostname;
    resolver.resolve(name, NOTHING_ALLOWED).then((resolved) => {
      if (!resolved.ok) {
        callback(new AddressRefusedError(`provider address refused (SSRF guard): ${resolved.detail}`), null);
        return;
      }
      const servername = opts.servername ?? (isIP(name) === 0 ? name : undefined);
      inner({ ...opts, hostname: resolved.address, ...(servername ? { servername } : {}) }, callback);
    }, (err: unknown) => callback(err instanceof Error ? err : new Error(String(err)), null));
  };
}
