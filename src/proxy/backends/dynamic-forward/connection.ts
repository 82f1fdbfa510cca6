/**
 * How the dynamic forward proxy connects to a checked destination: the backend policy's
 * connection members (policies/backend/connection.ts, the settings every kind uses) on a
 * connection to the checked IP, with the name the client asked for as SNI and as the name the
 * certificate must carry. What a request adds to the policy's settings: TLS with the system CAs
 * when the client asked for `https://` and the policy sets no `tls`, HTTP/1.1 (node's client
 * speaks it), and a connect deadline when the policy sets none.
 */
import type { Socket } from 'node:net';
import type { BackendMember, BackendPolicy } from '../../../ir/policy.ts';
import { BACKEND_MEMBERS } from '../../../ir/policy.ts';
import { connectionSettings, connectorFor, type ConnectionSettings } from '../../policies/backend/connection.ts';

/** How long connecting to a destination may take without a backend `tcp.connectTimeout`. */
export const FORWARD_CONNECT_TIMEOUT_MS = 10_000;

/** `tls: {}`: system CAs, the destination name verified, default ALPN (pinned below). */
const SYSTEM_TLS = connectionSettings({ sources: {}, tls: {} })?.tls;

export type ForwardConnection = ConnectionSettings;

/** The settings one request's connection is made with (`tls`: the client asked for TLS). */
export function forwardConnection(policy: ConnectionSettings | undefined, tls: boolean): ForwardConnection {
  return {
    fingerprint: '',
    version: 'http1',
    tls: policy?.tls ?? (tls ? SYSTEM_TLS : undefined),
    connectTimeoutMs: policy?.connectTimeoutMs ?? FORWARD_CONNECT_TIMEOUT_MS,
    keepaliveMs: policy?.keepaliveMs,
    tunnel: policy?.tunnel,
  };
}

/** A CONNECT tunnel's raw connection: `tcp` and `tunnel` of the policy, never TLS (the client speaks its own). */
export function rawConnection(policy: ConnectionSettings | undefined): ForwardConnection {
  return { fingerprint: '', version: undefined, tls: undefined, connectTimeoutMs: policy?.connectTimeoutMs ?? FORWARD_CONNECT_TIMEOUT_MS, keepaliveMs: policy?.keepaliveMs, tunnel: policy?.tunnel };
}

export interface CheckedTarget {
  /** The checked IP the connection is made to. */
  readonly address: string;
  readonly port: number;
  /** The name the client asked for: SNI and certificate verification use it. */
  readonly name: string;
}

/** Connects to `target` under `settings` (through the tunnel proxy when set, TLS when set); the socket once ready, or the error. */
export function openForwardConnection(settings: ForwardConnection, target: CheckedTarget, callback: (err: Error | null, socket: Socket | null) => void): void {
  const connect = connectorFor(settings, target.name);
  connect({ hostname: target.address, host: target.address, port: String(target.port), protocol: settings.tls ? 'https:' : 'http:' }, (...args) => {
    if (args[0]) callback(args[0], null);
    else callback(null, args[1] as Socket);
  });
}

/**
 * Members a CONNECT tunnel cannot apply: it carries opaque bytes (usually the client's own TLS),
 * so TLS origination, HTTP settings, credentials, transformation and extAuth have nothing to act
 * on; `tcp` and `tunnel` shape the connection and apply; `health` is not applied on this kind.
 */
export function tunnelUnapplicable(policy: BackendPolicy | undefined): BackendMember[] {
  if (!policy) return [];
  return BACKEND_MEMBERS.filter((m) => m !== 'tcp' && m !== 'tunnel' && m !== 'health' && policy[m] !== undefined);
}
