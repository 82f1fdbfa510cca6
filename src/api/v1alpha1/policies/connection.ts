/** BackendConnectionPolicy members: tcp, tls, http, tunnel (how the proxy connects to a backend). */
import { Int, List, Obj, OneOf, Opt, Str } from '../schema/build.ts';
import { atMostOne, exactlyOne } from '../schema/rules.ts';
import { Duration, SNI, ShortString, TinyString } from '../scalars.ts';
import { LocalSecretObjectRef, endpointProperties } from '../refs.ts';

export const Keepalive = () =>
  Obj({
    retries: Opt(Int(1, 64, { default: 9, description: 'unanswered probes before the connection is dropped' })),
    time: Opt(Duration({ default: '180s', description: 'idle time before the first probe' })),
    interval: Opt(Duration({ default: '180s', description: 'time between probes' })),
  }, { description: 'TCP keepalive' });

export const BackendTCP = () =>
  Obj({
    keepalive: Opt(Keepalive()),
    connectTimeout: Opt(Duration({ description: 'deadline to establish the connection' })),
  });

export const KEY_EXCHANGE_GROUPS = ['X25519', 'P-256', 'P-384', 'X25519_MLKEM768'] as const;
export const KeyExchangeGroups = () => List(OneOf(KEY_EXCHANGE_GROUPS), { description: 'key exchange groups, in order of preference' });
export const AlpnProtocols = () => List(TinyString(), { min: 1, max: 16, default: ['h2', 'http/1.1'], description: 'ALPN protocols offered' });

export const BackendTLS = () =>
  Obj({
    mtlsCertificateRef: Opt(List(LocalSecretObjectRef('Secret with tls.key, tls.crt and optionally ca.cert'), { max: 1, description: 'client certificate; none when unset' })),
    caCertificateRefs: Opt(List(Obj({
      name: Str(1, 253),
      kind: Opt(OneOf(['ConfigMap', 'Secret'] as const, { default: 'ConfigMap' })),
    }), { max: 1, description: 'CA bundle (key ca.crt) that verifies the server; system CAs when unset' })),
    insecureSkipVerify: Opt(OneOf(['All', 'Hostname'] as const, { description: 'All: no verification; Hostname: trust the CA but ignore hostname/SAN mismatch' })),
    sni: Opt(SNI({ description: 'server name sent; default the destination hostname' })),
    verifySubjectAltNames: Opt(List(ShortString(), { min: 1, max: 16, description: 'accepted SANs; default the destination hostname' })),
    alpnProtocols: Opt(AlpnProtocols()),
    keyExchangeGroups: Opt(KeyExchangeGroups()),
  }, { description: 'originate TLS to the backend (system CAs, SNI from the destination)', rules: [atMostOne(['verifySubjectAltNames', 'insecureSkipVerify'])] });

export const BackendHTTP = () =>
  Obj({
    version: Opt(OneOf(['HTTP1', 'HTTP2'] as const, { description: 'inferred when unset (Service appProtocol, HTTP2 for gRPC, the original protocol for plaintext, HTTP1 for HTTPS)' })),
    requestTimeout: Opt(Duration({ description: 'deadline for a response' })),
  });

export const BackendTunnel = () =>
  Obj({ ...endpointProperties }, { description: 'reach the backend through an HTTP CONNECT tunnel', rules: [exactlyOne(['backendRef', 'url'])] });
