/**
 * What the external processor's answers become in the pipeline: immediate responses as gateway
 * answers, failures as short JSON errors, header blocks replacing the headers in place.
 */
import type * as ExtProc from '../../../ext/extproc/index.ts';
import type { ImmediateAnswer } from '../../../ext/extproc/index.ts';
import { MAX_GRPC_MESSAGE_BYTES } from '../../../ext/endpoint.ts';
import { BodyTooLargeError, readBodyBounded } from '../../../http/body.ts';
import type { HeaderMap } from '../../../http/headers.ts';
import { respondError, type DirectResponse, type PolicyResult } from '../../result.ts';
import { lazyModule } from '../../../../common/lazy-module.ts';

/** The ext_proc client (gRPC): loaded when a config's extProc member is first compiled (lazy-module.ts). */
export const extProcModule = lazyModule<typeof ExtProc>(import.meta.url, '../../../ext/extproc/index.ts');

/** The processor's ImmediateResponse as the gateway's answer (repeated headers kept). */
export function immediateAnswer(answer: ImmediateAnswer): DirectResponse {
  const headers: Record<string, string | string[]> = {};
  for (const [name, value] of answer.headers) {
    const existing = headers[name];
    headers[name] = existing === undefined ? value : [...(Array.isArray(existing) ? existing : [existing]), value];
  }
  return { status: answer.status, headers, body: Buffer.from(answer.body.buffer, answer.body.byteOffset, answer.body.byteLength) };
}

const PROCESSOR_FAILED = respondError(500, 'ext_proc_failed', 'the external processor failed');

/**
 * The answer for an ext_proc error in the request phase: the processor's own answer, 413 for a
 * body over the buffer limit, 500 for a processor that failed (FailClosed, or FailOpen once the
 * body started). Anything else is not ours to answer: undefined.
 */
export function requestFailure(err: unknown): PolicyResult | undefined {
  // Called on ext_proc's path only: its module is loaded by then.
  const extProc = extProcModule();
  if (err instanceof extProc.ExtProcImmediateResponse) return { action: 'respond', response: immediateAnswer(err.response) };
  if (err instanceof extProc.ExtProcError) return err.status === 413 ? respondError(413, 'payload_too_large', err.message) : PROCESSOR_FAILED;
  return undefined;
}

/** Makes `target` hold exactly `headers` minus pseudo-headers (`:path`, `:status` …), in place. */
export function replaceHeaders(target: HeaderMap, headers: Readonly<Record<string, string | string[]>>): void {
  for (const name of Object.keys(target)) if (!(name in headers)) delete target[name];
  for (const [name, value] of Object.entries(headers)) if (!name.startsWith(':')) target[name] = value;
}

/** A one-chunk body, for handing a buffered body to the processor. */
export async function* oneChunk(body: Uint8Array): AsyncIterable<Uint8Array> {
  yield body;
}

/**
 * The processor's version of a buffered request body. It replaces a body already within the
 * request buffer limit; a processor answering more than MAX_PROCESSED_BODY_BYTES fails the
 * request (413 payload_too_large, as an over-limit body the processor sent back).
 */
export const MAX_PROCESSED_BODY_BYTES = MAX_GRPC_MESSAGE_BYTES;

export async function collectBody(body: AsyncIterable<Uint8Array>): Promise<Buffer> {
  try {
    return await readBodyBounded(body, MAX_PROCESSED_BODY_BYTES, { what: 'processed request body' });
  } catch (error) {
    if (error instanceof BodyTooLargeError) throw new (extProcModule().ExtProcError)(error.message, 413);
    throw error;
  }
}
