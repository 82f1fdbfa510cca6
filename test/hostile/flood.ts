/**
 * Writing a hostile answer body: `head`, then `bytes` of `x` in small chunks under backpressure,
 * then `tail` — unless the reader goes away first, which the returned record shows. Hostile
 * doubles use it to check that the gateway stops reading (closes the connection) once a body
 * passes its cap rather than reading the whole flood.
 */
import type { ServerResponse } from 'node:http';

const CHUNK_BYTES = 16 * 1024;

export interface FloodRecord {
  /** Bytes of the flood written so far. */
  sent: number;
  /** The reader closed the connection before the flood was finished. */
  cutOff: boolean;
  /** The whole flood and its tail went out. */
  finished: boolean;
}

/** Starts the flood on `res` (whose head the caller has written) and returns its live record. */
export function writeFlood(res: ServerResponse, bytes: number, head = '', tail = ''): FloodRecord {
  const record: FloodRecord = { sent: 0, cutOff: false, finished: false };
  void pump(res, record, bytes, head, tail);
  return record;
}

async function pump(res: ServerResponse, record: FloodRecord, bytes: number, head: string, tail: string): Promise<void> {
  let closed = false;
  res.on('close', () => {
    closed = true;
    if (!record.finished) record.cutOff = true;
  });
  if (head !== '') res.write(head);
  const chunk = Buffer.alloc(CHUNK_BYTES, 'x');
  while (record.sent < bytes && !closed) {
    const piece = chunk.subarray(0, Math.min(chunk.length, bytes - record.sent));
    record.sent += piece.length;
    if (!res.write(piece)) await drainedOrClosed(res);
  }
  if (closed) return;
  record.finished = true;
  res.end(tail);
}

function drainedOrClosed(res: ServerResponse): Promise<void> {
  return new Promise((ok) => {
    const done = (): void => {
      res.off('drain', done);
      res.off('close', done);
      ok();
    };
    res.on('drain', done);
    res.on('close', done);
  });
}

/** Waits up to `ms` for the reader's close to reach the writer (it lags the gateway's answer a little). */
export async function settled(record: FloodRecord, ms = 1_000): Promise<void> {
  for (const end = performance.now() + ms; !record.cutOff && !record.finished && performance.now() < end;) {
    await new Promise((ok) => setTimeout(ok, 10));
  }
}
