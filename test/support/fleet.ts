/**
 * Several named echo upstreams with a Service each, for cases that tell rules apart by which
 * server answered (`res.echo().server`): the Service name is the server name.
 */
import { createServer } from 'node:net';
import type { AddressInfo } from 'node:net';
import { startEchoServer, type EchoServer } from './echo-server.ts';
import { service, type ServiceOptions } from './manifests.ts';

export interface EchoFleet {
  readonly servers: Readonly<Record<string, EchoServer>>;
  /** Service + EndpointSlice manifests for every server. */
  readonly yaml: string;
  close(): Promise<void>;
}

export async function startEchoFleet(names: readonly string[], opts: ServiceOptions = {}): Promise<EchoFleet> {
  const list = await Promise.all(names.map((n) => startEchoServer(n)));
  const servers = Object.fromEntries(list.map((s) => [s.name, s]));
  return {
    servers,
    yaml: list.map((s) => service(s.name, s, opts)).join(''),
    close: async () => { await Promise.all(list.map((s) => s.close())); },
  };
}

/** A loopback port that nothing listens on (bound, then released), for connect-refused cases. */
export async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}
