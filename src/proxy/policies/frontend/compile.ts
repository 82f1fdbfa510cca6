import type { SecureContextOptions } from 'node:tls';
import { compile, type AuthorizationRule, type Program } from '../../../cel/index.ts';
import type { AccessLogPolicy, FrontendHttpPolicy, FrontendMember, FrontendPolicy, FrontendTlsPolicy } from '../../../ir/policy.ts';
import { compileMetricAttributes, type MetricAttribute } from '../../telemetry/metric-attributes.ts';
import type { ProxyProtocolVersion } from './proxy-protocol.ts';

/** Server settings that apply to HTTP on this bind (SPEC.md Frontend `http`). */
export interface FrontendHttp {
  readonly maxBufferBytes: number | undefined;
  readonly http1MaxHeaders: number | undefined;
  readonly http1IdleTimeoutMs: number | undefined;
  /** `http1HeaderCase: Preserve`: header names keep their spelling over HTTP/1 (header-case.ts). */
  readonly http1PreserveHeaderCase: boolean;
  /** Node http2 settings (initialWindowSize, maxFrameSize, maxHeaderListSize). */
  readonly http2Settings: { initialWindowSize?: number; maxFrameSize?: number; maxHeaderListSize?: number };
  readonly http2ConnectionWindowBytes: number | undefined;
  readonly http2KeepaliveIntervalMs: number | undefined;
  readonly http2KeepaliveTimeoutMs: number | undefined;
  readonly maxConnectionDurationMs: number | undefined;
}

export interface FrontendTls {
  readonly handshakeTimeoutMs: number;
  readonly alpnProtocols: readonly string[];
  /** Options every certificate's secure context is built with. */
  readonly contextOptions: SecureContextOptions;
}

export interface AccessLogSettings {
  readonly filter: Program | undefined;
  readonly remove: ReadonlySet<string>;
  readonly add: readonly { readonly name: string; readonly program: Program }[];
}

/** A bind's FrontendPolicy compiled once per config. */
export interface CompiledFrontend {
  /** Non-empty: a policy guarding this bind is invalid, connections are refused (fail closed). */
  readonly invalid: readonly string[];
  readonly proxyProtocol: { readonly version: ProxyProtocolVersion; readonly mode: 'Strict' | 'Optional' } | undefined;
  /** Connection-level authorization, before any protocol handling. */
  readonly networkRules: readonly AuthorizationRule[] | undefined;
  /** TCP keepalive idle time; Node cannot set the probe count or interval. */
  readonly keepaliveMs: number | undefined;
  readonly http: FrontendHttp;
  readonly tls: FrontendTls;
  /** Route: pipeline/connect.ts; Tunnel: server/bind-server.ts hands the stream to the addressed bind. */
  readonly connect: 'Deny' | 'Route' | 'Tunnel';
  readonly accessLog: AccessLogSettings | undefined;
  /** metrics.attributes: labels added to this bind's request metrics; undefined when none. */
  readonly metricAttributes: readonly MetricAttribute[] | undefined;
}

/** SPEC.md defaults. */
const DEFAULT_HANDSHAKE_TIMEOUT_MS = 15_000;
const DEFAULT_KEEPALIVE_MS = 180_000;
const DEFAULT_ALPN = ['h2', 'http/1.1'] as const;
const TLS_VERSIONS: Readonly<Record<string, 'TLSv1.2' | 'TLSv1.3'>> = { '1.2': 'TLSv1.2', '1.3': 'TLSv1.3' };
/** SPEC.md CipherSuite → OpenSSL names; TLS 1.3 suites go to `ciphersuites`, the rest to `ciphers`. */
const CIPHERS: Readonly<Record<string, string>> = {
  TLS13_AES_256_GCM_SHA384: 'TLS_AES_256_GCM_SHA384',
  TLS13_AES_128_GCM_SHA256: 'TLS_AES_128_GCM_SHA256',
  TLS13_CHACHA20_POLY1305_SHA256: 'TLS_CHACHA20_POLY1305_SHA256',
  TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384: 'ECDHE-ECDSA-AES256-GCM-SHA384',
  TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256: 'ECDHE-ECDSA-AES128-GCM-SHA256',
  TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256: 'ECDHE-ECDSA-CHACHA20-POLY1305',
  TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384: 'ECDHE-RSA-AES256-GCM-SHA384',
  TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256: 'ECDHE-RSA-AES128-GCM-SHA256',
  TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256: 'ECDHE-RSA-CHACHA20-POLY1305',
};
const GROUPS: Readonly<Record<string, string>> = { X25519: 'X25519', 'P-256': 'P-256', 'P-384': 'P-384', X25519_MLKEM768: 'X25519MLKEM768' };
/** Members not enforced yet (tracing: telemetry/tracing, and accessLog.otlp: telemetry/logs, are compiled per bind). */
const UNSUPPORTED: readonly FrontendMember[] = [];

export function compileFrontend(policy: FrontendPolicy | undefined, onError: (message: string) => void): CompiledFrontend | undefined {
  if (!policy) return undefined;
  const invalid: string[] = (policy.invalid ?? []).map((i) => `${i.source}: ${i.message}`);
  const describe = (member: FrontendMember, message: string) => `${policy.sources[member]?.join(', ') ?? 'ProxyPolicy'}: frontend.${member}: ${message}`;
  // Reported only: what we cannot do here opens nothing up (CONNECT stays refused, logs stay plain).
  const report = (member: FrontendMember, message: string) => onError(describe(member, message));
  const cel = (member: FrontendMember, expression: string, bool: boolean): Program | undefined => {
    const r = compile(expression, bool ? { expect: ['bool'] } : undefined);
    if (r.ok) return r.program;
    // A broken connection authorization fails closed; a broken log expression only drops its pair.
    if (member === 'networkAuthorization') invalid.push(describe(member, `invalid CEL expression: ${r.error.message}`));
    else report(member, `invalid CEL expression: ${r.error.message}`);
    return undefined;
  };
  for (const member of UNSUPPORTED) if (policy[member] !== undefined) report(member, 'not supported by this proxy yet');

  const networkRules = policy.networkAuthorization?.rules.map((rule) => ({
    action: rule.action,
    matchExpressions: rule.matchExpressions.map((e) => cel('networkAuthorization', e, true)).filter((p): p is Program => p !== undefined),
  }));

  const keepalive = policy.tcp?.keepalive;
  const compiled: CompiledFrontend = {
    invalid,
    proxyProtocol: policy.proxyProtocol,
    networkRules,
    keepaliveMs: keepalive ? (keepalive.timeMs ?? DEFAULT_KEEPALIVE_MS) : undefined,
    http: compileHttp(policy.http ?? {}),
    tls: compileTls(policy.tls ?? {}),
    connect: policy.connect?.mode ?? 'Deny',
    accessLog: policy.accessLog ? compileAccessLog(policy.accessLog, cel) : undefined,
    metricAttributes: metricAttributesOf(policy, (message) => report('metrics', message)),
  };
  for (const message of invalid) onError(message);
  return compiled;
}

function metricAttributesOf(policy: FrontendPolicy, report: (message: string) => void): readonly MetricAttribute[] | undefined {
  const add = policy.metrics?.attributes.add;
  if (add === undefined) return undefined;
  const attributes = compileMetricAttributes(add, report);
  return attributes.length > 0 ? attributes : undefined;
}

function compileHttp(http: FrontendHttpPolicy): FrontendHttp {
  return {
    maxBufferBytes: http.maxBufferSize,
    http1MaxHeaders: http.http1MaxHeaders,
    http1IdleTimeoutMs: http.http1IdleTimeoutMs,
    http1PreserveHeaderCase: http.http1HeaderCase === 'Preserve',
    http2Settings: {
      ...(http.http2WindowSize !== undefined ? { initialWindowSize: http.http2WindowSize } : {}),
      ...(http.http2FrameSize !== undefined ? { maxFrameSize: http.http2FrameSize } : {}),
      ...(http.http2MaxHeaderSize !== undefined ? { maxHeaderListSize: http.http2MaxHeaderSize } : {}),
    },
    http2ConnectionWindowBytes: http.http2ConnectionWindowSize,
    http2KeepaliveIntervalMs: http.http2KeepaliveIntervalMs,
    http2KeepaliveTimeoutMs: http.http2KeepaliveTimeoutMs,
    maxConnectionDurationMs: http.maxConnectionDurationMs,
  };
}

function compileTls(tls: FrontendTlsPolicy): FrontendTls {
  const suites = (tls.cipherSuites ?? []).map((s) => CIPHERS[s] ?? s);
  const tls13 = suites.filter((s) => s.startsWith('TLS_'));
  const tls12 = suites.filter((s) => !s.startsWith('TLS_'));
  const groups = (tls.keyExchangeGroups ?? []).map((g) => GROUPS[g] ?? g);
  const min = tls.minProtocolVersion !== undefined ? TLS_VERSIONS[tls.minProtocolVersion] : undefined;
  const max = tls.maxProtocolVersion !== undefined ? TLS_VERSIONS[tls.maxProtocolVersion] : undefined;
  return {
    handshakeTimeoutMs: tls.handshakeTimeoutMs ?? DEFAULT_HANDSHAKE_TIMEOUT_MS,
    alpnProtocols: tls.alpnProtocols ?? DEFAULT_ALPN,
    contextOptions: {
      // A suite list naming only one TLS version's suites rules the other version out.
      ...(min ?? (suites.length > 0 && tls12.length === 0) ? { minVersion: min ?? 'TLSv1.3' } : {}),
      ...(max ?? (suites.length > 0 && tls13.length === 0) ? { maxVersion: max ?? 'TLSv1.2' } : {}),
      ...(tls12.length > 0 ? { ciphers: tls12.join(':') } : {}),
      ...(tls13.length > 0 ? { ciphersuites: tls13.join(':') } : {}),
      ...(groups.length > 0 ? { ecdhCurve: groups.join(':') } : {}),
    },
  };
}

function compileAccessLog(log: AccessLogPolicy, cel: (m: FrontendMember, e: string, bool: boolean) => Program | undefined): AccessLogSettings {
  return {
    filter: log.filter !== undefined ? cel('accessLog', log.filter, true) : undefined,
    remove: new Set(log.attributes?.remove ?? []),
    add: (log.attributes?.add ?? []).flatMap((a) => {
      const program = cel('accessLog', a.expression, false);
      return program ? [{ name: a.name, program }] : [];
    }),
  };
}
