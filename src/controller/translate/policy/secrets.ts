import type { KubeObject } from '../../../api/gateway/object.ts';
import { stringRecord } from '../read.ts';
import type { SecretLedger } from '../secret-ledger.ts';

/** Secrets and ConfigMaps by `<namespace>/<name>`, as the policy resolver reads them. */
export interface ConfigSources {
  readonly secrets: ReadonlyMap<string, KubeObject>;
  readonly configMaps: ReadonlyMap<string, KubeObject>;
  /** Every Secret read is recorded here, and every value derived from one (/config_dump redacts them). */
  readonly ledger: SecretLedger;
}

/** A Secret's entries decoded: `data` is base64, `stringData` wins over it (as the API server merges them). Recorded in the ledger. */
export function secretEntries(secret: KubeObject, ledger: SecretLedger): Record<string, string> {
  return ledger.entries(secret);
}

/** A ConfigMap's text entries (`binaryData` holds no keys we read). */
export function configMapEntries(configMap: KubeObject): Record<string, string> {
  return stringRecord(configMap.data);
}

export type Lookup<T> = { ok: true; value: T } | { ok: false; message: string };

/** The entries of a Secret in `namespace`; a reference to another kind is refused (only core Secrets are supported). */
export function lookupSecret(sources: ConfigSources, namespace: string, ref: { name?: unknown; group?: unknown; kind?: unknown }, path: string): Lookup<Record<string, string>> {
  const group = typeof ref.group === 'string' ? ref.group : '';
  const kind = typeof ref.kind === 'string' && ref.kind !== '' ? ref.kind : 'Secret';
  if (group !== '' || kind !== 'Secret') return { ok: false, message: `${path}: ${group ? `${group}/` : ''}${kind} is not supported; only core Secrets are` };
  const id = `${namespace}/${String(ref.name)}`;
  const secret = sources.secrets.get(id);
  if (!secret) return { ok: false, message: `${path}: Secret ${id} not found` };
  return { ok: true, value: secretEntries(secret, sources.ledger) };
}

/** One entry of a Secret; `key` names it. */
export function lookupSecretKey(sources: ConfigSources, namespace: string, ref: { name?: unknown; group?: unknown; kind?: unknown }, key: string, path: string): Lookup<string> {
  const entries = lookupSecret(sources, namespace, ref, path);
  if (!entries.ok) return entries;
  const value = entries.value[key];
  if (value === undefined) return { ok: false, message: `${path}: Secret ${namespace}/${String(ref.name)} has no key ${key}` };
  return { ok: true, value };
}
