import { X509Certificate, createPrivateKey } from 'node:crypto';
import { CORE_GROUP, TLS_SECRET_TYPE, type GatewayTLSConfig, type SecretObjectReference } from '../../api/gateway/index.ts';
import type { KubeObject } from '../../api/gateway/object.ts';
import type { ListenerTLS } from '../../ir/types.ts';
import { isDict, listOf } from './read.ts';
import { referencePermitted, type RefFrom } from './refs.ts';
import type { SecretLedger } from './secret-ledger.ts';
import type { Snapshot } from './snapshot.ts';
import type { Problem } from './status/conditions.ts';

type Certificate = ListenerTLS['certificates'][number];

export interface ListenerTlsResult {
  readonly certificates: readonly Certificate[];
  /** Accepted problems (a TLS mode we cannot serve). */
  readonly accepted: readonly Problem[];
  /** ResolvedRefs problems (certificate references that do not resolve). */
  readonly refs: readonly Problem[];
}

/**
 * Resolve an HTTPS listener's certificates. Every valid reference is served (the first one is the
 * default); each broken one is reported with the Gateway API's reason and the field path.
 */
export function resolveListenerTls(tls: GatewayTLSConfig | undefined, path: string, from: RefFrom, snapshot: Snapshot): ListenerTlsResult {
  if (!isDict(tls)) return { certificates: [], accepted: [], refs: [{ reason: 'InvalidCertificateRef', message: `${path}.tls is required for protocol HTTPS` }] };
  const mode = tls.mode ?? 'Terminate';
  if (mode !== 'Terminate') {
    return { certificates: [], accepted: [{ reason: 'UnsupportedProtocol', message: `${path}.tls.mode ${String(mode)} is not supported for protocol HTTPS; only Terminate is` }], refs: [] };
  }
  const refs = listOf<SecretObjectReference>(tls.certificateRefs);
  if (refs.length === 0) return { certificates: [], accepted: [], refs: [{ reason: 'InvalidCertificateRef', message: `${path}.tls.certificateRefs must name at least one Secret` }] };

  const certificates: Certificate[] = [];
  const problems: Problem[] = [];
  refs.forEach((ref, i) => {
    const result = resolveCertificate(ref, `${path}.tls.certificateRefs[${i}]`, from, snapshot);
    if ('reason' in result) problems.push(result);
    else certificates.push(result);
  });
  return { certificates, accepted: [], refs: problems };
}

function resolveCertificate(ref: SecretObjectReference, path: string, from: RefFrom, snapshot: Snapshot): Certificate | Problem {
  const group = ref.group ?? CORE_GROUP;
  const kind = ref.kind ?? 'Secret';
  if (group !== CORE_GROUP || kind !== 'Secret') return { reason: 'InvalidCertificateRef', message: `${path}: ${group ? `${group}/` : ''}${kind} is not supported; only core Secrets are` };
  const namespace = typeof ref.namespace === 'string' && ref.namespace ? ref.namespace : from.namespace;
  const id = `${namespace}/${String(ref.name)}`;
  if (!referencePermitted(snapshot.referenceGrants, from, { group: CORE_GROUP, kind: 'Secret', namespace, name: String(ref.name) })) {
    return { reason: 'RefNotPermitted', message: `${path}: Secret ${id} is in another namespace and no ReferenceGrant in ${namespace} allows ${from.kind}s from ${from.namespace}` };
  }
  const secret = snapshot.secrets.get(id);
  if (!secret) return { reason: 'InvalidCertificateRef', message: `${path}: Secret ${id} not found` };
  return certificateFromSecret(secret, path, id, snapshot.secretLedger);
}

function certificateFromSecret(secret: KubeObject, path: string, id: string, ledger: SecretLedger): Certificate | Problem {
  if (secret.type !== TLS_SECRET_TYPE) return { reason: 'InvalidCertificateRef', message: `${path}: Secret ${id} has type ${String(secret.type ?? 'Opaque')}; ${TLS_SECRET_TYPE} is required` };
  // Read through the ledger: the key (and anything else in the Secret) is redacted in /config_dump.
  const values = ledger.entries(secret);
  const certPem = values['tls.crt'];
  const keyPem = values['tls.key'];
  if (!certPem || !keyPem) return { reason: 'InvalidCertificateRef', message: `${path}: Secret ${id} must hold both tls.crt and tls.key` };
  let certificate: X509Certificate;
  try {
    certificate = new X509Certificate(certPem);
  } catch {
    return { reason: 'InvalidCertificateRef', message: `${path}: Secret ${id} tls.crt is not a PEM certificate` };
  }
  try {
    if (!certificate.checkPrivateKey(createPrivateKey(keyPem))) return { reason: 'InvalidCertificateRef', message: `${path}: Secret ${id} tls.key does not match the certificate in tls.crt` };
  } catch {
    return { reason: 'InvalidCertificateRef', message: `${path}: Secret ${id} tls.key is not a PEM private key` };
  }
  return { certPem, keyPem };
}
