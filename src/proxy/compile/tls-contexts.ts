import { createHash } from 'node:crypto';
import { createSecureContext, type SecureContext, type SecureContextOptions } from 'node:tls';

export interface CertificatePair {
  readonly certPem: string;
  readonly keyPem: string;
}

/**
 * Secure contexts by certificate content, kept across config swaps: building one parses keys and
 * chains, which we do not want to repeat for unchanged certificates on every apply.
 */
export class SecureContextCache {
  #contexts = new Map<string, SecureContext>();
  #used = new Set<string>();

  /** Throws when the PEM does not parse or the key does not match the certificate. */
  get(pair: CertificatePair, options: SecureContextOptions = {}): SecureContext {
    // Frontend TLS settings (versions, ciphers, groups) are part of the context, hence of its key.
    const id = createHash('sha256').update(pair.certPem).update('\0').update(pair.keyPem).update('\0').update(JSON.stringify(options)).digest('hex');
    this.#used.add(id);
    let ctx = this.#contexts.get(id);
    if (!ctx) {
      ctx = createSecureContext({ ...options, cert: pair.certPem, key: pair.keyPem });
      this.#contexts.set(id, ctx);
    }
    return ctx;
  }

  /** Forget contexts the last compiled config did not ask for. */
  sweep(): void {
    for (const id of this.#contexts.keys()) if (!this.#used.has(id)) this.#contexts.delete(id);
    this.#used = new Set();
  }
}
