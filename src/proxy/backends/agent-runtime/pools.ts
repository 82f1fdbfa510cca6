/**
 * Connections to an agent runtime endpoint: one undici pool per origin and backend-policy
 * connection settings (tcp timeouts and keepalive, TLS with its CA/SNI/identity checks, a CONNECT
 * tunnel, the HTTP version). An https endpoint stays on TLS under a policy that has connection
 * members but no `tls` (system CAs, the endpoint's name as SNI), as AI providers do.
 */
import { Pool, type Dispatcher } from 'undici';
import type { BackendPolicy } from '../../../ir/policy.ts';
import { connectionSettings, connectorFor, type ConnectionSettings } from '../../policies/backend/connection.ts';
import type { RuntimeOrigin } from './endpoint.ts';

/** Derived once per (per-config, immutable) policy object, not per request. */
const settingsOf = new WeakMap<BackendPolicy, ConnectionSettings | undefined>();
const tlsSettingsOf = new WeakMap<BackendPolicy, ConnectionSettings | undefined>();

function settingsFor(policy: BackendPolicy, tls: boolean): ConnectionSettings | undefined {
  if (!settingsOf.has(policy)) settingsOf.set(policy, connectionSettings(policy));
  const settings = settingsOf.get(policy);
  if (settings === undefined || settings.tls !== undefined || !tls) return settings;
  if (!tlsSettingsOf.has(policy)) tlsSettingsOf.set(policy, connectionSettings({ ...policy, tls: {} }));
  return tlsSettingsOf.get(policy);
}

export class RuntimePools {
  readonly #pools = new Map<string, Dispatcher>();

  /** Throws when the policy's tunnel cannot be used (the caller answers 500: nothing sent). */
  acquire(origin: RuntimeOrigin, policy: BackendPolicy | undefined): Dispatcher {
    const settings = policy ? settingsFor(policy, origin.tls) : undefined;
    const key = `${settings?.fingerprint ?? '-'} ${origin.origin}`;
    let pool = this.#pools.get(key);
    if (pool) return pool;
    pool = settings
      ? new Pool(origin.origin, { connect: connectorFor(settings, origin.host), allowH2: settings.version === 'h2' })
      : new Pool(origin.origin);
    this.#pools.set(key, pool);
    return pool;
  }

  async close(): Promise<void> {
    const pools = [...this.#pools.values()];
    this.#pools.clear();
    await Promise.all(pools.map((p) => p.destroy().catch(() => undefined)));
  }
}
