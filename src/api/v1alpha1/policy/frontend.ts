/** Frontend: how a Gateway accepts connections (TCP, TLS, HTTP, PROXY protocol, CONNECT, telemetry). */
import { Int, List, Obj, OneOf, Opt } from '../schema/build.ts';
import { onlyWith } from '../schema/rules.ts';
import { ByteSize, Duration } from '../scalars.ts';
import { Authorization } from '../common/authorization.ts';
import { AlpnProtocols, Keepalive, KeyExchangeGroups } from '../policies/connection.ts';
import { AccessLog, Metrics, Tracing } from './telemetry.ts';

export const CIPHER_SUITES = [
  'TLS13_AES_256_GCM_SHA384', 'TLS13_AES_128_GCM_SHA256', 'TLS13_CHACHA20_POLY1305_SHA256',
  'TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384', 'TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256', 'TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256',
  'TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384', 'TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256', 'TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256',
] as const;

const TlsVersion = () => OneOf(['1.2', '1.3'] as const);

/** SPEC.md writes the size defaults as "2mb" and "16kb"; as ByteSize quantities they are 2Mi and 16Ki. */
export const FrontendHTTP = () =>
  Obj({
    maxBufferSize: Opt(ByteSize({ default: '2Mi', description: 'buffer limit for policies that need the body' })),
    http1MaxHeaders: Opt(Int(1, 4096, { default: 100 })),
    http1IdleTimeout: Opt(Duration({ default: '10m' })),
    http1HeaderCase: Opt(OneOf(['Lowercase', 'Preserve'] as const)),
    http2WindowSize: Opt(ByteSize()),
    http2ConnectionWindowSize: Opt(ByteSize()),
    http2FrameSize: Opt(ByteSize({ default: '16Ki' })),
    http2MaxHeaderSize: Opt(ByteSize({ default: '16Ki' })),
    http2KeepaliveInterval: Opt(Duration({ description: 'no pings when unset' })),
    http2KeepaliveTimeout: Opt(Duration({ description: 'only with http2KeepaliveInterval' })),
    maxConnectionDuration: Opt(Duration({ description: 'graceful close after the in-flight request' })),
  }, { rules: [onlyWith('http2KeepaliveTimeout', 'http2KeepaliveInterval')] });

export const Frontend = () =>
  Obj({
    tcp: Opt(Obj({ keepalive: Opt(Keepalive()) })),
    networkAuthorization: Opt(Authorization('CEL over downstream connections, before protocol handling')),
    tls: Opt(Obj({
      handshakeTimeout: Opt(Duration({ default: '15s' })),
      alpnProtocols: Opt(AlpnProtocols()),
      minProtocolVersion: Opt(TlsVersion()),
      maxProtocolVersion: Opt(TlsVersion()),
      cipherSuites: Opt(List(OneOf(CIPHER_SUITES))),
      keyExchangeGroups: Opt(KeyExchangeGroups()),
    })),
    http: Opt(FrontendHTTP()),
    proxyProtocol: Opt(Obj({
      version: Opt(OneOf(['V1', 'V2', 'All'] as const, { default: 'V2' })),
      mode: Opt(OneOf(['Strict', 'Optional'] as const, { default: 'Strict', description: 'Strict requires the header; Optional accepts PROXY or plain' })),
    })),
    connect: Opt(Obj({
      mode: OneOf(['Deny', 'Route', 'Tunnel'] as const, { description: 'unset connect rejects CONNECT with Method Not Allowed' }),
    })),
    accessLog: Opt(AccessLog()),
    tracing: Opt(Tracing()),
    metrics: Opt(Metrics()),
  }, { description: 'listener behaviour; targets only a Gateway' });
