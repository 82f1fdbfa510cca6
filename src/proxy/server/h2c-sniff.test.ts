import assert from 'node:assert/strict';
import { once } from 'node:events';
import { connect, createServer, type AddressInfo, type Socket } from 'node:net';
import { describe, it } from 'node:test';
import { sniffProtocol } from './h2c-sniff.ts';

/** Send `chunks` one write at a time; resolve with the decision and every byte the server can still read. */
async function sniff(chunks: readonly string[]): Promise<{ protocol: string; bytes: string }> {
  let serverSocket: Socket | undefined;
  const decided = new Promise<{ protocol: string; bytes: string }>((resolve) => {
    const server = createServer((socket) => {
      serverSocket = socket;
      sniffProtocol(socket, (protocol) => {
        let bytes = '';
        socket.on('data', (c: Buffer) => (bytes += c.toString('latin1')));
        socket.resume();
        setImmediate(() => {
          server.close();
          resolve({ protocol, bytes });
        });
      });
    });
    server.listen(0, '127.0.0.1', async () => {
      const client = connect((server.address() as AddressInfo).port, '127.0.0.1');
      await once(client, 'connect');
      for (const chunk of chunks) {
        client.write(chunk);
        // Let each write arrive as its own segment so the sniffer sees a partial preface.
        await new Promise((r) => setTimeout(r, 5));
      }
      decided.finally(() => client.destroy());
    });
  });
  const result = await decided;
  serverSocket?.destroy();
  return result;
}

describe('sniffProtocol', () => {
  it('closes a connection that stays silent', async () => {
    const server = createServer((socket) => sniffProtocol(socket, () => assert.fail('nothing was sent'), 20));
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    const client = connect((server.address() as AddressInfo).port, '127.0.0.1');
    await once(client, 'close');
    server.close();
  });

  const preface = 'PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n';
  const cases = [
    { name: 'a full preface in one segment is h2', chunks: [preface + 'frames'], protocol: 'h2' },
    { name: 'a preface split across segments is h2', chunks: ['PRI * HT', 'TP/2.0\r\n\r\nSM\r\n\r\nxyz'], protocol: 'h2' },
    { name: 'an HTTP/1 request is h1', chunks: ['GET / HTTP/1.1\r\n\r\n'], protocol: 'h1' },
    { name: 'a method sharing the first byte is h1', chunks: ['P', 'OST / HTTP/1.1\r\n\r\n'], protocol: 'h1' },
  ];
  for (const c of cases) {
    it(c.name, async () => {
      const { protocol, bytes } = await sniff(c.chunks);
      assert.equal(protocol, c.protocol);
      // Whatever was read to decide is put back for the chosen server.
      assert.ok(c.chunks.join('').startsWith(bytes) && bytes.length >= c.chunks[0].length, bytes);
    });
  }
});
