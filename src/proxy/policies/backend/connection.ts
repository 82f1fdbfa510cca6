import { createHash } from 'node:crypto';
import { connect as netConnect, type Socket } from 'node:net';
import { checkServerIdentity, connect as tlsConnect, rootCertificates, type ConnectionOptions, type PeerCertificate } from 'node:tls';
import type { buildConnector } from 'undici';
import type { BackendPolicy, BackendTLSPolicy } from '../../../ir/policy.ts';
import { openTunnel, tunnelProxyOf, type TunnelProxies, type TunnelProxy } from './tunnel.ts';

/** Spec defaults: ALPN offers h2 then http/1.1 (SPEC.md BackendTLS.alpnProtocols). */
const DEFAULT_ALPN = ['h2', 'http/1.1'] as const;

/** What undici's own connector uses when no keepalive is configured. */
const UNDICI_KEEPALIVE_MS = 60_000;

/** SPEC.md KeyExchangeGroup → OpenSSL group names for `ecdhCurve`. */
const GROUP_NAMES: Readonly<Record<string, string>> = {
  X25519: 'X25519',
  'P-256': 'P-256',
  'P-384': 'P-384',
  X25519_MLKEM768: 'X25519MLKEM768',
};

/**
 * How connections to a backend's endpoints are made, from the tcp/tls/http members. Computed at
 * config time; `fingerprint` keys the upstream pools so different settings never share a socket.
 */
export interface ConnectionSettings {
  readonly fingerprint: string;
  /** 'h2' means HTTP/2 (over TLS by ALPN, else h2c with prior knowledge); 'http1' HTTP/1.1 only. */
  readonly version: 'http1' | 'h2' | undefined;
  readonly tls: ResolvedTls | undefined;
  readonly connectTimeoutMs: number | undefined;
  /** Idle time before TCP keepalive probes start; Node cannot set the probe count or interval. */
  readonly keepaliveMs: number | undefined;
  /** Reach the endpoints through this HTTP CONNECT proxy (one of a backend's, per connection). */
  readonly tunnel: TunnelProxies | undefined;
}

export interface ResolvedTls {
  /** Fixed SNI; undefined means the endpoint's host when it is a DNS name. */
  readonly sni: string | undefined;
  readonly options: ConnectionOptions;
  /** Names the server certificate must carry (SAN); empty means the destination host. */
  readonly subjectAltNames: readonly string[];
  readonly verifyHostname: boolean;
  readonly alpn: readonly string[];
}

/** The connection-relevant part of a policy, or undefined when it changes nothing about connecting. */
/** Throws for a tunnel it cannot use (the policy then fails closed). */
export function connectionSettings(policy: BackendPolicy): ConnectionSettings | undefined {
  const { tls, tcp, http, tunnel } = policy;
  const version = http?.version === 'HTTP2' ? 'h2' : http?.version === 'HTTP1' ? 'http1' : undefined;
  if (!tls && !tunnel && tcp?.connectTimeoutMs === undefined && tcp?.keepalive === undefined && version === undefined) return undefined;
  const keepaliveMs = tcp?.keepalive ? (tcp.keepalive.timeMs ?? 180_000) : undefined;
  const fingerprint = createHash('sha256').update(JSON.stringify({ tls, tcp, version, tunnel })).digest('hex').slice(0, 16);
  return {
    fingerprint, version, tls: tls ? resolveTls(tls) : undefined, connectTimeoutMs: tcp?.connectTimeoutMs, keepaliveMs,
    tunnel: tunnel ? tunnelProxyOf(tunnel) : undefined,
  };
}

export function resolveTls(tls: BackendTLSPolicy): ResolvedTls {
  const ca = tls.caCertificatePem ?? tls.mtlsCertificate?.caPem;
  const skipAll = tls.insecureSkipVerify === 'All';
  const groups = tls.keyExchangeGroups?.map((g) => GROUP_NAMES[g] ?? g);
  const options: ConnectionOptions = {
    // A custom CA replaces the system store, as SPEC.md says ("system CAs when unset").
    ca: ca ?? [...rootCertificates],
    rejectUnauthorized: !skipAll,
    ...(tls.mtlsCertificate ? { cert: tls.mtlsCertificate.certPem, key: tls.mtlsCertificate.keyPem } : {}),
    ...(groups && groups.length > 0 ? { ecdhCurve: groups.join(':') } : {}),
  };
  return {
    sni: tls.sni,
    options,
    subjectAltNames: tls.verifySubjectAltNames ?? [],
    verifyHostname: !skipAll && tls.insecureSkipVerify !== 'Hostname',
    alpn: tls.alpnProtocols ?? DEFAULT_ALPN,
  };
}

const isIp = (host: string) => /^[\d.]+$/.test(host) || host.includes(':');

/** The SNI to send to `host`: the configured one, else the host when it is a name (never an IP). */
export function serverNameFor(tls: ResolvedTls, host: string): string | undefined {
  return tls.sni ?? (isIp(host) ? undefined : host);
}

/**
 * Verifies the peer against `verifySubjectAltNames` (any one suffices) or, by default, the SNI
 * or destination host; Node's own check already proved the chain.
 */
export function identityCheck(tls: ResolvedTls, host: string): (servername: string, cert: PeerCertificate) => Error | undefined {
  if (!tls.verifyHostname) return () => undefined;
  // Default: the name we asked for (the configured SNI), else the destination host.
  const names = tls.subjectAltNames.length > 0 ? tls.subjectAltNames : [tls.sni ?? host];
  return (_servername, cert) => {
    let last: Error | undefined;
    for (const name of names) {
      last = checkServerIdentity(name, cert);
      if (!last) return undefined;
    }
    return last;
  };
}

/**
 * An undici connector honouring the settings: our own because undici forces its ALPN list and
 * takes SNI from each request's Host header. One per endpoint and settings.
 */
export function connectorFor(settings: ConnectionSettings, host: string): buildConnector.connector {
  const tls = settings.tls;
  return (opts, callback) => {
    const port = Number(opts.port);
    let settled = false;
    const done = (err: Error | null, socket: Socket | null) => {
      if (settled) return;
      settled = true;
      if (timer) clearTimeout(timer);
      if (err) {
        socket?.destroy();
        callback(err, null);
      } else callback(null, socket as Socket);
    };
    const keepalive = settings.keepaliveMs ?? UNDICI_KEEPALIVE_MS;
    // TLS (when configured) runs over `raw`: a direct TCP connection, or the CONNECT stream.
    const secure = (raw: Socket | undefined): Socket => {
      if (!tls) throw new Error('unreachable: no TLS settings');
      const servername = serverNameFor(tls, host);
      // HTTP1 pins ALPN to http/1.1 so an h2-capable server never answers in a protocol we did not pick.
      const alpn = settings.version === 'http1' ? ['http/1.1'] : settings.version === 'h2' ? ['h2'] : [...tls.alpn];
      const options = { ...tls.options, ALPNProtocols: alpn, checkServerIdentity: identityCheck(tls, host), ...(servername ? { servername } : {}) };
      const socket = raw ? tlsConnect({ ...options, socket: raw }) : tlsConnect({ ...options, host: opts.hostname, port });
      socket.once('secureConnect', () => done(null, socket));
      socket.once('error', (err) => done(err, socket));
      return socket;
    };
    // h2c with prior knowledge: undici reads the protocol from alpnProtocol, as its own connector sets it.
    const plain = (socket: Socket): Socket => {
      if (settings.version === 'h2') (socket as Socket & { alpnProtocol?: string }).alpnProtocol = 'h2';
      return socket;
    };
    let socket: Socket;
    if (settings.tunnel) {
      let proxy: TunnelProxy;
      try {
        proxy = settings.tunnel.next();
      } catch (err) {
        // The tunnel's backend has no ready endpoint in the newest config: this connection fails.
        callback(err as Error, null);
        return;
      }
      socket = openTunnel(proxy, { host: opts.hostname, port }, (err, opened) => {
        if (err) done(err, opened);
        else if (tls) socket = secure(opened);
        else done(null, plain(opened));
      });
    } else if (tls) {
      socket = secure(undefined);
    } else {
      socket = plain(netConnect({ host: opts.hostname, port }));
      socket.once('connect', () => done(null, socket));
      socket.once('error', (err) => done(err, socket));
    }
    socket.setNoDelay(true);
    socket.setKeepAlive(true, keepalive);
    const timer = settings.connectTimeoutMs !== undefined
      ? setTimeout(() => {
        const err = new Error(`connect timeout after ${settings.connectTimeoutMs} ms`) as Error & { code: string };
        err.code = 'UND_ERR_CONNECT_TIMEOUT';
        done(err, socket);
      }, settings.connectTimeoutMs)
      : undefined;
  };
}
