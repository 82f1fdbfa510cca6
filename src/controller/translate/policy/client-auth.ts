import { createHash } from 'node:crypto';
import type { KubeObject } from '../../../api/gateway/object.ts';
import type { ApiKeyAuthenticationPolicy, ApiKeyEntry, BasicAuthenticationPolicy, CredentialLocation, Json } from '../../../ir/policy.ts';
import { isDict, stringRecord } from '../read.ts';
import { selectorMatches } from '../selector.ts';
import { compareStrings, namespaceOf } from '../snapshot.ts';
import type { LowerContext } from './lower.ts';
import type { SecretLedger } from '../secret-ledger.ts';
import { configMapEntries, lookupSecret, lookupSecretKey, secretEntries } from './secrets.ts';

const BEARER: CredentialLocation = { header: { name: 'Authorization', prefix: 'Bearer ' } };
const BASIC: CredentialLocation = { header: { name: 'Authorization', prefix: 'Basic ' } };
const HASH = /^sha256:([0-9a-fA-F]{64})$/;

type Mode = ApiKeyAuthenticationPolicy['mode'];

/**
 * apiKeyAuthentication with its keys resolved from a Secret, Secrets selected by label, or
 * ConfigMaps selected by label. Every key is stored as a sha256 hash, so the IR never carries a
 * raw key and the proxy compares fixed-length digests. ConfigMaps must hold hashes only.
 */
export function resolveApiKeyAuthentication(spec: Record<string, unknown>, path: string, ctx: LowerContext, selectable: SelectableConfig): ApiKeyAuthenticationPolicy {
  const keys: ApiKeyEntry[] = [];
  if (isDict(spec.secretRef)) {
    const found = lookupSecret(ctx.sources, ctx.namespace, spec.secretRef, `${path}.secretRef`);
    if (found.ok) keys.push(...entriesToKeys(String(spec.secretRef.name), found.value, false, `${path}.secretRef`, ctx.problems, ctx.sources.ledger));
    else ctx.problems.push(found.message);
  } else if (isDict(spec.secretSelector)) {
    const labels = stringRecord(spec.secretSelector.matchLabels);
    const selected = selectable.secrets.filter((s) => namespaceOf(s) === ctx.namespace && selectorMatches({ matchLabels: labels }, stringRecord(s.metadata.labels)));
    if (selected.length === 0) ctx.problems.push(`${path}.secretSelector matches no Secret in namespace ${ctx.namespace}`);
    for (const s of selected) keys.push(...entriesToKeys(s.metadata.name, secretEntries(s, ctx.sources.ledger), false, `${path}.secretSelector (Secret ${s.metadata.name})`, ctx.problems, ctx.sources.ledger));
  } else if (isDict(spec.configMapSelector)) {
    const labels = stringRecord(spec.configMapSelector.matchLabels);
    const selected = selectable.configMaps.filter((c) => namespaceOf(c) === ctx.namespace && selectorMatches({ matchLabels: labels }, stringRecord(c.metadata.labels)));
    if (selected.length === 0) ctx.problems.push(`${path}.configMapSelector matches no ConfigMap in namespace ${ctx.namespace}`);
    for (const c of selected) keys.push(...entriesToKeys(c.metadata.name, configMapEntries(c), true, `${path}.configMapSelector (ConfigMap ${c.metadata.name})`, ctx.problems, undefined));
  }
  keys.sort((a, b) => compareStrings(a.id, b.id));
  return { mode: (spec.mode as Mode | undefined) ?? 'Strict', location: (spec.location as CredentialLocation | undefined) ?? BEARER, keys };
}

/** Every Secret and ConfigMap, for label selection. */
export interface SelectableConfig {
  readonly secrets: readonly KubeObject[];
  readonly configMaps: readonly KubeObject[];
}

/**
 * One data entry per key: a plain key, or JSON `{key | keyHash, metadata}`. With a ledger (the
 * entries came from a Secret) every derived value is recorded: the hash (a weak key could be
 * found from it) and the metadata.
 */
function entriesToKeys(objectName: string, entries: Record<string, string>, hashOnly: boolean, path: string, problems: string[], ledger: SecretLedger | undefined): ApiKeyEntry[] {
  const out: ApiKeyEntry[] = [];
  for (const [name, raw] of Object.entries(entries).sort(([a], [b]) => compareStrings(a, b))) {
    const id = `${objectName}/${name}`;
    const parsed = parseEntry(raw.trim());
    if (typeof parsed === 'string') {
      problems.push(`${path}: entry ${name}: ${parsed}`);
      continue;
    }
    if (hashOnly && parsed.key !== undefined) {
      problems.push(`${path}: entry ${name} holds a raw key; ConfigMap entries must use keyHash (sha256:<hex>)`);
      continue;
    }
    const keyHash = parsed.keyHash ?? sha256Hex(parsed.key ?? '');
    let metadata = parsed.metadata;
    if (ledger) {
      if (parsed.key !== undefined) ledger.record(parsed.key);
      ledger.record(keyHash);
      // The ledger's object, not ours: an equal tree a kept route already holds (SecretLedger.recordTree).
      if (metadata !== undefined) metadata = ledger.recordTree(metadata);
    }
    out.push({ id, keyHash, ...(metadata !== undefined ? { metadata } : {}) });
  }
  return out;
}

function parseEntry(raw: string): { key?: string; keyHash?: string; metadata?: Json } | string {
  if (!raw.startsWith('{')) return raw === '' ? 'empty key' : { key: raw };
  let value: unknown;
  try {
    value = JSON.parse(raw);
  } catch {
    return 'looks like JSON but does not parse';
  }
  if (!isDict(value)) return 'must be a JSON object';
  const metadata = value.metadata as Json | undefined;
  if (typeof value.key === 'string' && value.key !== '' && value.keyHash === undefined) return { key: value.key, metadata };
  if (typeof value.keyHash === 'string' && value.key === undefined) {
    const m = HASH.exec(value.keyHash);
    return m ? { keyHash: m[1].toLowerCase(), metadata } : 'keyHash must have the form sha256:<64 hex digits>';
  }
  return 'needs exactly one of key, keyHash';
}

function sha256Hex(text: string): string {
  return createHash('sha256').update(text).digest('hex');
}

/** basicAuthentication with the password file resolved (inline `users` or a Secret's `.htaccess`). */
export function resolveBasicAuthentication(spec: Record<string, unknown>, path: string, ctx: LowerContext): BasicAuthenticationPolicy {
  let users: string[] = [];
  if (Array.isArray(spec.users)) users = spec.users.filter((u): u is string => typeof u === 'string');
  else if (isDict(spec.secretRef)) {
    const key = typeof spec.secretRef.key === 'string' ? spec.secretRef.key : '.htaccess';
    const found = lookupSecretKey(ctx.sources, ctx.namespace, spec.secretRef, key, `${path}.secretRef`);
    if (found.ok) users = passwordFileLines(found.value).map((line) => ctx.sources.ledger.record(line));
    else ctx.problems.push(found.message);
  }
  users.forEach((line, i) => {
    if (!/^[^:]+:.+$/.test(line)) ctx.problems.push(`${path}: password-file line ${i + 1} is not <user>:<hash>`);
  });
  return {
    mode: (spec.mode as BasicAuthenticationPolicy['mode'] | undefined) ?? 'Strict',
    realm: typeof spec.realm === 'string' ? spec.realm : 'Restricted',
    location: (spec.location as CredentialLocation | undefined) ?? BASIC,
    users,
  };
}

function passwordFileLines(text: string): string[] {
  return text.split(/\r?\n/).map((l) => l.trim()).filter((l) => l !== '' && !l.startsWith('#'));
}
