import { BodyTooLargeError, readBodyBounded } from '../../http/body.ts';

/**
 * Reading a provider's whole answer under a size cap. Without one, a provider (or anything
 * impersonating it) answering a non-streamed call with 1 GiB took the process to 4.3 GB RSS.
 */

/**
 * The largest non-streamed provider answer (or error body) buffered in memory: 32 MiB. It fits
 * the largest legitimate answers (an embeddings batch of 2048 base64 vectors is ~17 MB); past it
 * the upstream read is aborted and the client gets 502 in its own error format.
 */
export const MAX_PROVIDER_RESPONSE_BYTES = 32 * 1024 * 1024;

/** Token endpoints (OAuth, STS, metadata servers) answer a few KB; anything past this is refused. */
export const MAX_TOKEN_RESPONSE_BYTES = 1024 * 1024;

/** The provider's answer passed the buffer cap; the exchange was aborted. */
export class ResponseTooLargeError extends Error {
  readonly limit: number;
  constructor(limit: number) {
    super(`the provider's answer is larger than ${limit} bytes`);
    this.name = 'ResponseTooLargeError';
    this.limit = limit;
  }
}

/** Reads a provider's answer whole, or throws ResponseTooLargeError once it passes `maxBytes` (the read is stopped and the body destroyed). */
export async function readProviderAnswer(body: Parameters<typeof readBodyBounded>[0], maxBytes: number): Promise<Buffer> {
  try {
    return await readBodyBounded(body, maxBytes);
  } catch (err) {
    if (err instanceof BodyTooLargeError) throw new ResponseTooLargeError(maxBytes);
    throw err;
  }
}
