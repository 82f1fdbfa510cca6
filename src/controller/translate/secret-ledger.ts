import type { KubeObject, ObjectStatus } from '../../api/gateway/object.ts';
import { MIN_CONTAINED_LENGTH, SecretMatcher } from '../../common/secret-matcher.ts';
import { isDict, stringRecord } from './read.ts';

/**
 * Provenance of Secret data in one translation. Every Secret the translator reads is read through
 * `entries()`, and every value it derives from one (a prefix stripped, a line of a password file,
 * a key's hash, a JSON entry's fields) is recorded where it is derived. The translator then knows
 * which IR locations carry Secret data (`locate`, for /config_dump) and can keep Secret data out
 * of the status messages it writes (`scrubStatuses`).
 *
 * Certificates are public: a value that is nothing but PEM CERTIFICATE blocks is not recorded, so
 * /config_dump keeps showing which certificate a listener serves. A value that mixes a certificate
 * with a private key is recorded whole.
 */
export class SecretLedger {
  readonly #values = new Set<string>();
  /** Fields inside JSON values (a service-account key's private_key): the IR holds the whole JSON, so these only matter in text. */
  readonly #textOnly = new Set<string>();
  readonly #trees = new Set<object>();
  #matcher: SecretMatcher | undefined;
  #textMatcher: SecretMatcher | undefined;
  #touches = 0;

  /** How many times anything was read or recorded: a step that moved it depends on Secret data (route-memo.ts). */
  get touches(): number {
    return this.#touches;
  }

  /** A Secret's entries, decoded (`data` is base64; `stringData` wins, as the API server merges them); all recorded. */
  entries(secret: KubeObject): Record<string, string> {
    this.#touches++;
    const encoded = stringRecord(secret.data);
    const fromData = Object.fromEntries(Object.entries(encoded).map(([k, v]) => [k, Buffer.from(v, 'base64').toString('utf8')]));
    const entries = { ...fromData, ...stringRecord(secret.stringData) };
    for (const [key, value] of Object.entries(entries)) {
      if (isPublicCertificate(value)) continue;
      this.record(value);
      if (encoded[key] !== undefined) this.record(encoded[key]);
      this.record(value.trim());
      for (const leaf of jsonLeaves(value)) this.#recordTextOnly(leaf);
    }
    return entries;
  }

  /** Records a string derived from Secret data and returns it, so derivations stay expressions. */
  record<T extends string>(value: T): T {
    this.#touches++;
    if (value !== '' && !isPublicCertificate(value)) {
      this.#values.add(value);
      this.#matcher = undefined;
      this.#textMatcher = undefined;
    }
    return value;
  }

  #recordTextOnly(value: string): void {
    // Short fields of a JSON key ("type": "service_account") are not secret and too common.
    if (value.length < MIN_CONTAINED_LENGTH || isPublicCertificate(value)) return;
    this.#textOnly.add(value);
    this.#textMatcher = undefined;
  }

  /** Records a JSON value parsed from Secret data: the whole subtree is Secret data wherever it lands. */
  recordTree<T>(value: T): T {
    this.#touches++;
    if (typeof value === 'string') return this.record(value);
    if (value !== null && typeof value === 'object') {
      this.#trees.add(value);
      for (const child of Object.values(value)) this.recordTree(child);
    }
    return value;
  }

  /** Every recorded string, including fields of JSON values (for scrubbing text such as log lines). */
  values(): string[] {
    return [...new Set([...this.#values, ...this.#textOnly])].sort();
  }

  /**
   * JSON Pointers (RFC 6901) of every location under `root` that holds Secret data: a recorded
   * subtree, a string equal to a recorded value, or a string containing one. Sorted.
   */
  locate(root: unknown): string[] {
    const matcher = this.#matcherNow();
    if (matcher.size === 0 && this.#trees.size === 0) return [];
    const out: string[] = [];
    const walk = (value: unknown, pointer: string): void => {
      if (typeof value === 'string') {
        if (matcher.isSecret(value)) out.push(pointer);
      } else if (value !== null && typeof value === 'object') {
        if (this.#trees.has(value)) {
          out.push(pointer);
          return;
        }
        for (const [key, child] of Object.entries(value)) walk(child, `${pointer}/${escapePointer(key)}`);
      }
    };
    walk(root, '');
    return out.sort();
  }

  /** Statuses with every recorded value in a condition message replaced by `[redacted]`. */
  scrubStatuses(statuses: readonly ObjectStatus[]): ObjectStatus[] {
    const matcher = (this.#textMatcher ??= new SecretMatcher([...this.#values, ...this.#textOnly]));
    if (matcher.size === 0) return [...statuses];
    return statuses.map((s) => scrubStrings(s, matcher) as ObjectStatus);
  }

  #matcherNow(): SecretMatcher {
    return (this.#matcher ??= new SecretMatcher(this.#values));
  }
}

/** Object keys escaped for a JSON Pointer: `~` → `~0`, `/` → `~1`. */
export function escapePointer(key: string): string {
  return key.replaceAll('~', '~0').replaceAll('/', '~1');
}

const CERTIFICATE_BLOCK = /-----BEGIN CERTIFICATE-----[A-Za-z0-9+/=\s]*-----END CERTIFICATE-----/g;

/** Only PEM certificates (and whitespace): public by design. */
export function isPublicCertificate(text: string): boolean {
  if (!text.includes('-----BEGIN CERTIFICATE-----')) return false;
  return text.replace(CERTIFICATE_BLOCK, '').trim() === '';
}

/** String leaves of a JSON object or array value (a service-account key's private_key …); none when the value is not JSON. */
function jsonLeaves(text: string): string[] {
  const start = text.trimStart()[0];
  if (start !== '{' && start !== '[') return [];
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return [];
  }
  const out: string[] = [];
  const walk = (v: unknown): void => {
    if (typeof v === 'string') out.push(v);
    else if (v !== null && typeof v === 'object') for (const child of Object.values(v)) walk(child);
  };
  walk(parsed);
  return out;
}

function scrubStrings(value: unknown, matcher: SecretMatcher): unknown {
  if (typeof value === 'string') return matcher.scrub(value);
  if (Array.isArray(value)) return value.map((v) => scrubStrings(v, matcher));
  if (isDict(value)) return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, scrubStrings(v, matcher)]));
  return value;
}
