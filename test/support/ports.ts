/**
 * Ports for a process a test spawns to listen on later (a CLI's gateway, admin and metrics ports),
 * and ports nothing listens on (connect-refused cases).
 *
 * Not from port 0: a port the kernel hands out there comes from the ephemeral range
 * (net.ipv4.ip_local_port_range, 32768–60999 by default), which every outgoing connection of the
 * parallel test files also draws from — released, it can be taken before the spawned process
 * binds it (seen in CI: `listen EADDRINUSE` in test/e2e/cli-run.test.ts). These come from below
 * that range, where nothing is handed out: each process walks up from a random start, checking
 * that it can bind each port, so two test files only collide if their walks meet.
 */
import { readFileSync } from 'node:fs';
import { createServer } from 'node:net';

const LOWEST = 10_000;

function ephemeralLow(): number {
  try {
    const low = Number(readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/)[0]);
    return Number.isInteger(low) && low > LOWEST + 1_000 ? low : 32_768;
  } catch {
    return 32_768;
  }
}

const HIGHEST = ephemeralLow() - 1;
let next = LOWEST + Math.floor(Math.random() * (HIGHEST - LOWEST));

function canBind(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once('error', () => resolve(false));
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
  });
}

/** A loopback port below the ephemeral range that nothing listened on a moment ago. */
export async function unusedPort(): Promise<number> {
  for (let tries = 0; tries < 200; tries++) {
    const port = next;
    next = next >= HIGHEST ? LOWEST : next + 1;
    if (await canBind(port)) return port;
  }
  throw new Error(`no free loopback port in ${LOWEST}–${HIGHEST} after 200 tries`);
}
