/**
 * A provider's stream for the stream translator, each read split after its first
 * FIRST_SLICE_BYTES, with what the first piece made put on the wire before the rest is translated.
 *
 * Why: a socket read can hold much more than the provider's first event — a provider that writes
 * its first token and then the rest of a long answer right after often arrives as one 64 KiB read.
 * The translator returns the client events of a whole push at once, and Node's response corks its
 * socket on a write until the next tick, which under the chain of promise continuations that
 * writes one read's events comes only after all of them: the first token waited for every event
 * of the read to be translated and written (~0.7 ms for 400 events, most of what a translated
 * route added to the time to first token). Split and flushed, the first token goes out after at
 * most FIRST_SLICE_BYTES of translation. The rest of the read is pushed whole and goes out
 * batched as before, so a long read costs one more socket write, not one per event (flushing
 * every 2 KiB doubled the CPU per streamed event). The translator keeps partial events and UTF-8
 * sequences across pushes, as it must for network reads anyway.
 */
export const FIRST_SLICE_BYTES = 2048;

/** `flush` runs when the consumer comes back for more after a read's first piece (ClientSink.flush). */
export async function* inSlices(body: AsyncIterable<Uint8Array>, flush: () => void, size = FIRST_SLICE_BYTES): AsyncGenerator<Uint8Array, void, undefined> {
  for await (const chunk of body) {
    if (chunk.length <= size) {
      yield chunk;
      flush();
      continue;
    }
    yield chunk.subarray(0, size);
    flush();
    yield chunk.subarray(size);
  }
}
