/**
 * Reading a whole body into memory, always under a cap. Every place the proxy buffers a body it
 * did not produce (a client's request, an upstream's or an external service's answer) reads it
 * through here, so a peer sending more than the cap costs at most the cap: reading stops at the
 * first chunk past it and the source is destroyed (for a response, the upstream connection is
 * closed) unless the caller still needs it (a client request that is about to get its 413).
 */

/** A body passed its cap. Callers answer it as SPEC.md says: 413 for requests, 502 (or the member's failure mode) for answers. */
export class BodyTooLargeError extends Error {
  readonly limit: number;

  constructor(limit: number, what = 'body') {
    super(`${what} larger than ${limit} bytes`);
    this.name = 'BodyTooLargeError';
    this.limit = limit;
  }
}

/** What a body source may offer besides its chunks (undici's BodyReadable, Node's streams). */
type BodySource = AsyncIterable<Uint8Array | string> & { destroy?: (error?: Error) => unknown };

export interface ReadBodyOptions {
  /** Names the body in the error message (e.g. "JWKS document"). */
  readonly what?: string;
  /**
   * Destroy the source when the cap is passed (default true). A server request that is about to
   * be answered 413 is left alone instead, so the client reads the answer rather than a reset.
   */
  readonly destroy?: boolean;
}

/** The whole body, or a {@link BodyTooLargeError} once more than `maxBytes` arrived. */
export async function readBodyBounded(body: BodySource, maxBytes: number, options: ReadBodyOptions = {}): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let size = 0;
  const iterator = body[Symbol.asyncIterator]();
  for (;;) {
    const next = await iterator.next();
    if (next.done === true) break;
    const chunk = typeof next.value === 'string' ? Buffer.from(next.value) : toBuffer(next.value);
    size += chunk.length;
    if (size > maxBytes) {
      const error = new BodyTooLargeError(maxBytes, options.what);
      if (options.destroy === false) {
        // Stop iterating without destroying the source: the caller answers on the same connection.
        chunks.length = 0;
      } else {
        // Returning the iterator destroys a Node stream; destroy() covers sources that only have that.
        await iterator.return?.();
        body.destroy?.();
      }
      throw error;
    }
    chunks.push(chunk);
  }
  return chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, size);
}

/** The body as UTF-8 text, under the same cap. */
export async function readTextBounded(body: BodySource, maxBytes: number, options: ReadBodyOptions = {}): Promise<string> {
  return (await readBodyBounded(body, maxBytes, options)).toString('utf8');
}

/**
 * At most the first `maxBytes` of a body (an error detail worth logging or quoting); the rest is
 * not read and the source is destroyed.
 */
export async function readBodyPrefix(body: BodySource, maxBytes: number): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const value of body) {
    const chunk = typeof value === 'string' ? Buffer.from(value) : toBuffer(value);
    chunks.push(chunk.subarray(0, maxBytes - size));
    size = Math.min(maxBytes, size + chunk.length);
    if (size >= maxBytes) {
      // Leaving the loop destroys a Node stream; destroy() covers sources that only have that.
      body.destroy?.();
      break;
    }
  }
  return Buffer.concat(chunks, size).toString('utf8');
}

function toBuffer(chunk: Uint8Array): Buffer {
  return Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
}
