import { request } from 'undici';
import { readTextBounded } from '../../../../http/body.ts';
import type { Logger } from '../../../../../common/logger.ts';
import type { ProviderQuirks } from './providers.ts';

/** A fetched document is reused this long; IdPs change metadata rarely and clients ask often. */
const CACHE_MS = 5 * 60_000;
const FETCH_TIMEOUT_MS = 5_000;
const MAX_DOCUMENT_BYTES = 256 * 1024;

export type Metadata = Record<string, unknown>;

/**
 * The IdP's authorization-server metadata, fetched from the first discovery URL its quirks list
 * that answers 200 with a JSON object, cached, with concurrent callers sharing one fetch.
 * Failures are not cached: the next client asks again.
 */
export class DiscoveryCache {
  readonly #urls: readonly string[];
  readonly #logger: Logger;
  #cached: { readonly doc: Metadata; readonly until: number } | undefined;
  #pending: Promise<Metadata> | undefined;

  constructor(issuer: string, quirks: ProviderQuirks, logger: Logger) {
    this.#urls = quirks.discoveryUrls(issuer);
    this.#logger = logger;
  }

  get(): Promise<Metadata> {
    const cached = this.#cached;
    if (cached && cached.until > Date.now()) return Promise.resolve(cached.doc);
    this.#pending ??= this.#fetchFirst().finally(() => (this.#pending = undefined));
    return this.#pending;
  }

  async #fetchFirst(): Promise<Metadata> {
    const failures: string[] = [];
    for (const url of this.#urls) {
      try {
        const doc = await fetchJson(url);
        this.#cached = { doc, until: Date.now() + CACHE_MS };
        return doc;
      } catch (err) {
        failures.push(`${url}: ${(err as Error).message}`);
      }
    }
    this.#logger.warn({ failures }, 'MCP OAuth: no authorization server metadata from the identity provider');
    throw new Error(`authorization server metadata unavailable (${failures.join('; ')})`);
  }
}

async function fetchJson(url: string): Promise<Metadata> {
  const res = await request(url, { headers: { accept: 'application/json' }, headersTimeout: FETCH_TIMEOUT_MS, bodyTimeout: FETCH_TIMEOUT_MS });
  const text = await readTextBounded(res.body, MAX_DOCUMENT_BYTES, { what: 'document' });
  if (res.statusCode !== 200) throw new Error(`status ${res.statusCode}`);
  const doc: unknown = JSON.parse(text);
  if (doc === null || typeof doc !== 'object' || Array.isArray(doc)) throw new Error('not a JSON object');
  return doc as Metadata;
}
