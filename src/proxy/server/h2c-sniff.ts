import type { Socket } from 'node:net';

const PREFACE = Buffer.from('PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n', 'latin1');
/** A connection that sends nothing for this long is closed before any server owns it. */
const SNIFF_TIMEOUT_MS = 30_000;

/**
 * Read just enough of a fresh cleartext connection to tell HTTP/2 with prior knowledge (the
 * client preface) from HTTP/1.x, put the bytes back, and report. The first byte that differs
 * from the preface decides HTTP/1; a full preface decides HTTP/2.
 */
export function sniffProtocol(socket: Socket, onDecided: (protocol: 'h1' | 'h2') => void, idleMs = SNIFF_TIMEOUT_MS): void {
  let seen: Buffer = Buffer.alloc(0);
  socket.setTimeout(idleMs, () => socket.destroy());
  const onData = (chunk: Buffer) => {
    seen = seen.length === 0 ? chunk : Buffer.concat([seen, chunk]);
    const compared = Math.min(seen.length, PREFACE.length);
    const isPrefix = seen.subarray(0, compared).equals(PREFACE.subarray(0, compared));
    if (isPrefix && compared < PREFACE.length) return;
    socket.off('data', onData);
    socket.setTimeout(0);
    socket.pause();
    socket.unshift(seen);
    onDecided(isPrefix ? 'h2' : 'h1');
  };
  socket.on('data', onData);
}
