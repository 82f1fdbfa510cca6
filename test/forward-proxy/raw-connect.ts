/** A CONNECT written by hand on a fresh connection: what tests read when they want the gateway's exact answer line. */
import { once } from 'node:events';
import { connect as netConnect } from 'node:net';

/** The status line of the gateway's answer to `CONNECT authority` on `127.0.0.1:port`. */
export async function rawConnect(port: number, authority: string): Promise<string> {
  const socket = netConnect(port, '127.0.0.1');
  await once(socket, 'connect');
  socket.write(`CONNECT ${authority} HTTP/1.1\r\nhost: ${authority}\r\n\r\n`);
  const [chunk] = (await once(socket, 'data')) as [Buffer];
  socket.destroy();
  return chunk.toString().split('\r\n')[0];
}
