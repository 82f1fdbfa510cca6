/**
 * The targets of a backend a policy calls as its external service (extAuth, rate-limit service,
 * JWKS, extProc, OTLP, tunnel, token endpoint, webhook): each ready endpoint of the backend, with
 * the TLS settings of the backend policies attached to that Service or ProxyBackend
 * (`Backend.connection`, which the translator fills in). Calls are spread over them round robin.
 *
 * Two ways to reach them:
 *   - `backendTargets(config.backends, key)`: bound to one config version — clients compiled with
 *     the config (extAuth, rate limit, extProc, JWKS) are replaced with it, so a new version with
 *     new endpoints gives new targets;
 *   - `liveTargets(key)`: what the newest compiled config says at each call — for what is compiled
 *     once per policy object and kept across config versions (token mechanisms, connection
 *     settings cached by policy identity), whose targets must still follow EndpointSlice changes.
 *     The proxy runs one runtime per process; `publishBackends` is called by each compile.
 */
import { createHash } from 'node:crypto';
import type { Backend, BackendConnectionPolicy } from '../../../ir/types.ts';
import { RoundRobinTargets, type ResolvedEndpoint, type ServiceTargets, type TargetTls } from '../../ext/endpoint.ts';
import { identityCheck, resolveTls, serverNameFor } from './connection.ts';

let published: Readonly<Record<string, Backend>> = {};

/** Makes `backends` (a config being compiled) what live targets resolve against. */
export function publishBackends(backends: Readonly<Record<string, Backend>>): void {
  published = backends;
}

/** Whether the newest compiled config has backend `key`. */
export function isPublished(key: string): boolean {
  return published[key] !== undefined;
}

/** Per Backend object (the IR is immutable): unchanged backends keep their round-robin position across versions. */
const compiled = new WeakMap<Backend, ServiceTargets | Error>();

/** The targets of backend `key` of `backends`; throws when it is missing, has no ready endpoint or its policy is invalid. */
export function backendTargets(backends: Readonly<Record<string, Backend>>, key: string): ServiceTargets {
  const backend = backends[key];
  if (!backend) throw new Error(`backend ${key} is not in the config`);
  let targets = compiled.get(backend);
  if (!targets) {
    try {
      targets = new RoundRobinTargets(targetsOf(backend));
    } catch (err) {
      targets = err as Error;
    }
    compiled.set(backend, targets);
  }
  if (targets instanceof Error) throw targets;
  return targets;
}

/**
 * Targets that resolve `key` against the newest published config at each call (see above). When
 * that config no longer has the backend (a request of the previous version still in flight, or
 * another runtime of the process, as in tests), the backend as it was when these were made is used.
 */
export function liveTargets(key: string): ServiceTargets {
  const made = { [key]: published[key] } as Readonly<Record<string, Backend>>;
  backendTargets(made, key);
  const current = () => backendTargets(published[key] ? published : made, key);
  return {
    get all() {
      return current().all;
    },
    next: () => current().next(),
  };
}

function targetsOf(backend: Backend): ResolvedEndpoint[] {
  const connection = backend.connection;
  if (connection?.invalid && connection.invalid.length > 0) {
    throw new Error(`backend ${backend.key}: its backend policy is invalid (${connection.invalid.map((i) => `${i.source}: ${i.message}`).join('; ')})`);
  }
  if (backend.endpoints.length === 0) throw new Error(`backend ${backend.key} has no ready endpoint`);
  const settings = connection ? fingerprint(connection) : undefined;
  const connectTimeoutMs = connection?.tcp?.connectTimeoutMs;
  return backend.endpoints.map((e) => ({
    host: e.host,
    port: e.port,
    ...(connection?.tls ? { tls: targetTls(connection.tls, e.host) } : {}),
    ...(settings !== undefined ? { settings } : {}),
    ...(connectTimeoutMs !== undefined ? { connectTimeoutMs } : {}),
  }));
}

/** A backend `tls` policy as Node TLS options for one endpoint: CA, client certificate, SNI, name check. */
function targetTls(tls: NonNullable<BackendConnectionPolicy['tls']>, host: string): TargetTls {
  const resolved = resolveTls(tls);
  const servername = serverNameFor(resolved, host);
  return { ...resolved.options, checkServerIdentity: identityCheck(resolved, host), ...(servername !== undefined ? { servername } : {}) } as TargetTls;
}

function fingerprint(connection: BackendConnectionPolicy): string {
  return createHash('sha256').update(JSON.stringify({ tls: connection.tls, tcp: connection.tcp, http: connection.http })).digest('hex').slice(0, 16);
}
