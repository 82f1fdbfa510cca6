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

interface DestroyableBody extends AsyncIterable<Uint8Array> {
  destroy(err?: Error): unknown;
}

/** Reads `body` whole, or destroys it and throws ResponseTooLargeError once it passes `maxBytes`. */
export async function readCapped(body: DestroyableBody, maxBytes: number): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of body) {
    size += chunk.length;
    if (size > maxBytes) {
      const err = new ResponseTooLargeError(maxBytes);
      body.destroy(err);
      throw err;
    }
    chunks.push(Buffer.from(chunk.buffer, chunk.byteOffset, chunk.length));
  }
  return Buffer.concat(chunks, size);
}

/** `readCapped` as UTF-8 text. */
export async function readCappedText(body: DestroyableBody, maxBytes: number): Promise<string> {
  return (await readCapped(body, maxBytes)).toString('utf8');
}
