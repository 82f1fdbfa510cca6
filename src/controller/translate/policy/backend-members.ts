import type { BackendAuthPolicy, BackendTLSPolicy } from '../../../ir/policy.ts';
import { isDict, listOf } from '../read.ts';
import { lower, type LowerContext } from './lower.ts';
import { configMapEntries, lookupSecret } from './secrets.ts';

/** BackendTLS with its certificate references resolved to PEM text. */
export function resolveBackendTls(schema: unknown, spec: Record<string, unknown>, path: string, ctx: LowerContext): BackendTLSPolicy {
  const { mtlsCertificateRef, caCertificateRefs, ...rest } = spec;
  const out: Record<string, unknown> = lower(schema, rest, path, ctx) as Record<string, unknown>;
  const [mtls] = listOf<Record<string, unknown>>(mtlsCertificateRef);
  if (mtls) {
    const at = `${path}.mtlsCertificateRef[0]`;
    const found = lookupSecret(ctx.sources, ctx.namespace, mtls, at);
    if (!found.ok) ctx.problems.push(found.message);
    else if (!found.value['tls.crt'] || !found.value['tls.key']) ctx.problems.push(`${at}: Secret ${ctx.namespace}/${String(mtls.name)} must hold tls.crt and tls.key`);
    else out.mtlsCertificate = { certPem: found.value['tls.crt'], keyPem: found.value['tls.key'], ...(found.value['ca.cert'] ? { caPem: found.value['ca.cert'] } : {}) };
  }
  const [ca] = listOf<Record<string, unknown>>(caCertificateRefs);
  if (ca) {
    const at = `${path}.caCertificateRefs[0]`;
    const pem = ca.kind === 'Secret' ? caFromSecret(ca, at, ctx) : caFromConfigMap(ca, at, ctx);
    if (pem !== undefined) out.caCertificatePem = pem;
  }
  return out as BackendTLSPolicy;
}

function caFromSecret(ref: Record<string, unknown>, at: string, ctx: LowerContext): string | undefined {
  const found = lookupSecret(ctx.sources, ctx.namespace, { name: ref.name }, at);
  if (!found.ok) ctx.problems.push(found.message);
  else if (!found.value['ca.crt']) ctx.problems.push(`${at}: Secret ${ctx.namespace}/${String(ref.name)} has no key ca.crt`);
  else return found.value['ca.crt'];
  return undefined;
}

function caFromConfigMap(ref: Record<string, unknown>, at: string, ctx: LowerContext): string | undefined {
  const id = `${ctx.namespace}/${String(ref.name)}`;
  const configMap = ctx.sources.configMaps.get(id);
  const pem = configMap ? configMapEntries(configMap)['ca.crt'] : undefined;
  if (!configMap) ctx.problems.push(`${at}: ConfigMap ${id} not found`);
  else if (!pem) ctx.problems.push(`${at}: ConfigMap ${id} has no key ca.crt`);
  return pem;
}

const DEFAULT_AUTH_KEY = 'Authorization';

/**
 * BackendAuth with Secret references resolved. `secretRef` becomes `key`: the Authorization
 * value, with a `Bearer ` prefix stripped only when read from the default key (SPEC.md), since
 * the location adds its own prefix when writing it. Extra `credentials` carry their values.
 */
export function resolveBackendAuth(schema: unknown, spec: Record<string, unknown>, path: string, ctx: LowerContext): BackendAuthPolicy {
  const lowered = lower(schema, spec, path, ctx) as Record<string, unknown>;
  const { secret, credentials, ...rest } = lowered;
  const out: Record<string, unknown> = { ...rest };
  if (typeof secret === 'string') {
    const usesDefaultKey = !isDict(spec.secretRef) || spec.secretRef.key === undefined || spec.secretRef.key === DEFAULT_AUTH_KEY;
    out.key = ctx.sources.ledger.record(usesDefaultKey ? secret.replace(/^Bearer\s+/i, '') : secret);
  }
  if (Array.isArray(credentials)) {
    out.credentials = listOf<Record<string, unknown>>(credentials).flatMap((c) => (typeof c.secret === 'string' ? [{ location: c.location, value: c.secret }] : []));
  }
  return out as BackendAuthPolicy;
}
