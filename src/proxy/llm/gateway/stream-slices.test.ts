import assert from 'node:assert/strict';
import { createServer, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, it } from 'node:test';
import { ClientSink } from './client-io.ts';
import { FIRST_SLICE_BYTES, inSlices } from './stream-slices.ts';

async function* reads(...sizes: number[]): AsyncGenerator<Uint8Array> {
  for (const [i, n] of sizes.entries()) yield Buffer.alloc(n, 97 + i);
}

describe('inSlices: a large read split after its first piece, flushed in between', () => {
  const cases: { name: string; reads: number[]; pieces: number[]; flushesBefore: number[] }[] = [
    { name: 'small reads pass whole, each flushed once written', reads: [10, 20], pieces: [10, 20], flushesBefore: [0, 1] },
    { name: 'a large read: its first piece, a flush, then the rest whole', reads: [64 * 1024], pieces: [FIRST_SLICE_BYTES, 64 * 1024 - FIRST_SLICE_BYTES], flushesBefore: [0, 1] },
    { name: 'exactly one slice is not split', reads: [FIRST_SLICE_BYTES], pieces: [FIRST_SLICE_BYTES], flushesBefore: [0] },
  ];
  for (const c of cases) {
    it(c.name, async () => {
      let flushes = 0;
      const pieces: number[] = [];
      const seen: number[] = [];
      for await (const piece of inSlices(reads(...c.reads), () => flushes++)) {
        pieces.push(piece.length);
        seen.push(flushes);
      }
      assert.deepEqual(pieces, c.pieces);
      assert.deepEqual(seen, c.flushesBefore, 'the flush comes after the consumer handled the first piece, before the next');
    });
  }

  it('keeps the bytes in order', async () => {
    const out: Buffer[] = [];
    for await (const piece of inSlices(reads(5000, 3), () => undefined)) out.push(Buffer.from(piece));
    assert.deepEqual(Buffer.concat(out), Buffer.concat([Buffer.alloc(5000, 97), Buffer.alloc(3, 98)]));
  });
});

describe('ClientSink.flush', () => {
  it('uncorks the socket Node corked on a write, so the bytes go out now rather than on the next tick', async () => {
    let corked: number[] = [];
    const server: Server = createServer((_req, res) => {
      const sink = new ClientSink(res);
      sink.head(200, { 'content-type': 'text/plain' });
      void sink.write(Buffer.from('first'));
      const socket = res.socket;
      corked = [socket?.writableCorked ?? -1];
      sink.flush();
      corked.push(socket?.writableCorked ?? -1);
      sink.end();
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const body = await new Promise<string>((resolve, reject) => {
      request({ host: '127.0.0.1', port: (server.address() as AddressInfo).port }, (res) => {
        let text = '';
        res.setEncoding('utf8').on('data', (c: string) => (text += c)).on('end', () => resolve(text));
      }).on('error', reject).end();
    });
    await new Promise((resolve) => server.close(resolve));
    assert.equal(body, 'first');
    assert.deepEqual(corked, [1, 0]);
  });
});
