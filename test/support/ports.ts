/**
 * Ports for a process a test spawns to listen on later (a CLI's gateway, admin and metrics ports),
 * and ports nothing listens on (connect-refused cases).
 *
 * Not from port 0: a port the kernel hands out there comes from the ephemeral range
 * (net.ipv4.ip_local_port_range, 32768–60999 by default), which every outgoing connection of the
 * parallel test files also draws from — released, it can be taken before the spawned process
 * binds it (seen in CI: `listen EADDRINUSE` in test/e2e/cli-run.test.ts). These come from below
 * that range, where nothing is handed out: each process walks up from a random start, checking
 * that it can bind each port.
 *
 * Two test files running at once could still meet on a port: one checks it and hands it to a
 * process that is still starting, the other's walk checks it in that gap and binds it first (seen
 * in CI: a hostile-config gateway's `before` was answered by another file's server on its port,
 * then got ECONNREFUSED when that one closed). So each port handed out is also reserved for this
 * process by a file named after it in a folder every test process shares, created exclusively and
 * holding our pid; a reservation whose pid is gone is taken over, and ours are removed at exit.
 */
import { mkdirSync, openSync, closeSync, readFileSync, rmSync, writeSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

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

export const RESERVATIONS = join(tmpdir(), 'switchboard-test-ports');
const reserved: string[] = [];
let cleanupInstalled = false;

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    // EPERM: a live process of another user.
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

function createExclusively(file: string): boolean {
  try {
    const fd = openSync(file, 'wx');
    writeSync(fd, String(process.pid));
    closeSync(fd);
    return true;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw err;
  }
}

/** Whether `port` is now reserved for this process (false: another live test process holds it). */
export function reservePort(port: number): boolean {
  mkdirSync(RESERVATIONS, { recursive: true });
  const file = join(RESERVATIONS, String(port));
  if (!createExclusively(file)) {
    let holder = Number.NaN;
    try {
      holder = Number(readFileSync(file, 'utf8'));
    } catch {
      // Removed meanwhile by its owner: free again, but let the next try take it.
    }
    // A file just created may not hold its pid yet (NaN): taken as held.
    if (!Number.isInteger(holder) || holder <= 0 || alive(holder)) return false;
    rmSync(file, { force: true });
    // Two processes taking over the same stale file: only one creates it again.
    if (!createExclusively(file)) return false;
  }
  reserved.push(file);
  if (!cleanupInstalled) {
    cleanupInstalled = true;
    process.once('exit', () => {
      for (const f of reserved) rmSync(f, { force: true });
    });
  }
  return true;
}

/**
 * A loopback port below the ephemeral range that nothing listened on a moment ago, reserved for this
 * test process until it exits (no other test process is handed it meanwhile).
 */
export async function unusedPort(): Promise<number> {
  for (let tries = 0; tries < 200; tries++) {
    const port = next;
    next = next >= HIGHEST ? LOWEST : next + 1;
    if (!reservePort(port)) continue;
    if (await canBind(port)) return port;
  }
  throw new Error(`no free loopback port in ${LOWEST}–${HIGHEST} after 200 tries`);
}
