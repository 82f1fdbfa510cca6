/**
 * Several named echo upstreams with a Service each, for cases that tell rules apart by which
 * server answered (`res.echo().server`): the Service name is the server name.
 */
import { startEchoServer, type EchoServer } from './echo-server.ts';
import { service, type ServiceOptions } from './manifests.ts';
import { unusedPort } from './ports.ts';

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

/**
 * A loopback port that nothing listens on, for connect-refused cases and for a process the test
 * spawns to listen on (ports.ts: from below the ephemeral range, so no other socket takes it).
 */
export function closedPort(): Promise<number> {
  return unusedPort();
}
