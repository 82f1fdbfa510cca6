/** The raw byte tunnel of an accepted CONNECT (pipeline/connect.ts, the dynamic forward proxy). */
import type { Duplex } from 'node:stream';

const ESTABLISHED = 'HTTP/1.1 200 Connection Established\r\n\r\n';

/** After `200`, bytes flow both ways until either side closes; `done(200, bytes sent to the client)` once. */
export function splice(client: Duplex, upstream: Duplex, head: Buffer, done: (status: number, bytes: number) => void): void {
  let bytes = 0;
  let finished = false;
  const finish = () => {
    if (finished) return;
    finished = true;
    client.destroy();
    upstream.destroy();
    done(200, bytes);
  };
  upstream.on('data', (chunk: Buffer) => {
    bytes += chunk.length;
  });
  upstream.on('error', finish);
  client.on('error', finish);
  upstream.once('close', finish);
  client.once('close', finish);
  client.write(ESTABLISHED);
  if (head.length > 0) upstream.write(head);
  upstream.pipe(client);
  client.pipe(upstream);
}

