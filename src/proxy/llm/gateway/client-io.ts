/** The client side of an LLM exchange: the body read under the buffer limit, and a sink that respects backpressure. */
import type { DownstreamRequest, DownstreamResponse } from '../../http/downstream.ts';
import { requestBody } from '../../http/downstream.ts';
import { BodyTooLargeError, type PolicyContext } from '../../policies/context.ts';
import { DEFAULT_MAX_BUFFER_BYTES } from '../../policies/request-context.ts';
import type { AbortSource } from './upstream.ts';

/**
 * The whole request body. Through the policy context when traffic policies ran (it may already
 * hold the buffered or replaced body, and knows the frontend's limit); otherwise read here under
 * the default 2 MiB limit. Throws BodyTooLargeError past the limit.
 */
export async function readRequestBody(req: DownstreamRequest, policy: PolicyContext | undefined, maxBytes = DEFAULT_MAX_BUFFER_BYTES): Promise<Buffer> {
  if (policy) return policy.readBody();
  const stream = requestBody(req);
  if (!stream) return Buffer.alloc(0);
  const declared = Number(req.headers['content-length']);
  if (Number.isFinite(declared) && declared > maxBytes) throw new BodyTooLargeError(maxBytes, 'request body');
  return collectBody(stream, maxBytes);
}

/**
 * Buffers a readable with its events rather than `for await`: an async iterator costs a promise
 * per chunk and measurably more CPU per request on the translated LLM path.
 */
function collectBody(stream: NonNullable<ReturnType<typeof requestBody>>, maxBytes: number): Promise<Buffer> {
  return new Promise<Buffer>((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size > maxBytes) {
        cleanup();
        stream.resume(); // drain the rest so the connection stays usable for the error answer
        reject(new BodyTooLargeError(maxBytes, 'request body'));
        return;
      }
      chunks.push(chunk);
    };
    const onEnd = () => {
      cleanup();
      resolve(chunks.length === 1 ? chunks[0] : Buffer.concat(chunks, size));
    };
    const onError = (err: Error) => {
      cleanup();
      reject(err);
    };
    const onClose = () => {
      cleanup();
      reject(new Error('the client closed the request before its body was complete'));
    };
    const cleanup = () => {
      stream.off('data', onData);
      stream.off('end', onEnd);
      stream.off('error', onError);
      stream.off('close', onClose);
    };
    stream.on('data', onData);
    stream.on('end', onEnd);
    stream.on('error', onError);
    stream.on('close', onClose);
  });
}

/**
 * Writes to the client, waiting for drain under backpressure; knows when the client went away
 * (closed before the answer was complete), which aborts upstream exchanges listening to it.
 */
export class ClientSink implements AbortSource {
  readonly #res: DownstreamResponse;
  #closed = false;
  #aborted = false;
  #bytes = 0;
  readonly #closeWaiters: (() => void)[] = [];
  readonly #abortListeners: (() => void)[] = [];

  constructor(res: DownstreamResponse) {
    this.#res = res;
    res.on('close', () => {
      this.#closed = true;
      for (const wake of this.#closeWaiters.splice(0)) wake();
      if (res.writableEnded) return;
      this.#aborted = true;
      for (const listener of this.#abortListeners.splice(0)) listener();
    });
  }

  get closed(): boolean {
    return this.#closed;
  }

  get aborted(): boolean {
    return this.#aborted;
  }

  onAbort(listener: () => void): () => void {
    this.#abortListeners.push(listener);
    return () => {
      const i = this.#abortListeners.indexOf(listener);
      if (i >= 0) this.#abortListeners.splice(i, 1);
    };
  }

  get bytes(): number {
    return this.#bytes;
  }

  get started(): boolean {
    return this.#res.headersSent;
  }

  head(status: number, headers: Readonly<Record<string, string>>): void {
    if (!this.#closed) this.#res.writeHead(status, { ...headers });
  }

  /**
   * Writes a chunk. A promise only while the client is slow (the response's buffer is full): wait
   * for it before writing more. Otherwise undefined — a streamed answer writes an event at a time,
   * and awaiting an already-settled promise per event would cost a promise and a microtask each.
   */
  write(chunk: Uint8Array): Promise<void> | undefined {
    if (this.#closed || chunk.length === 0) return undefined;
    this.#bytes += chunk.length;
    if (this.#res.write(Buffer.from(chunk.buffer, chunk.byteOffset, chunk.length))) return undefined;
    return new Promise<void>((resolve) => {
      this.#closeWaiters.push(resolve);
      this.#res.once('drain', resolve);
    });
  }

  /**
   * Puts what was written on the wire now. Node's response corks its socket on a write and uncorks
   * on the next tick, which under a chain of promise continuations (a stream translated read by
   * read) only comes after the whole chain: the first token would wait for the last event of the
   * read. A response without a socket of its own (the pipeline's wrapper) is left as it is.
   */
  flush(): void {
    const socket = (this.#res as { socket?: { writableCorked?: number; uncork?: () => void } | null }).socket;
    if (socket?.writableCorked) socket.uncork?.();
  }

  /** A complete answer in one go. */
  send(status: number, headers: Readonly<Record<string, string>>, body: Uint8Array): void {
    if (this.#closed) return;
    this.#res.writeHead(status, { ...headers, 'content-length': String(body.length) });
    this.#bytes += body.length;
    // end(body) sends head and body in one write.
    (this.#res as { end(chunk: Buffer): void }).end(Buffer.from(body.buffer, body.byteOffset, body.length));
  }

  /**
   * The gateway's own refusal or failure (a policy refusal, 413, no provider reachable …), not the
   * backend's answer: route response effects apply, response filters do not — as on a Service
   * backend, where they see only what the upstream answered.
   */
  refuse(status: number, headers: Readonly<Record<string, string>>, body: Uint8Array): void {
    if (this.#closed) return;
    this.#res.gatewayAnswer?.();
    this.send(status, headers, body);
  }

  end(): void {
    if (!this.#closed && !this.#res.writableEnded) this.#res.end();
  }
}
