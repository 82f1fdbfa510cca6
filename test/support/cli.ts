/**
 * Runs the real CLI (`switchboard run -f DIR`) as a child process for e2e tests of the embedded
 * mode: admin and metrics on free loopback ports, output captured for failure messages.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { resolve } from 'node:path';
import { closedPort } from './fleet.ts';
import { sendRequest, type TestResponse } from './client.ts';

export interface CliProcess {
  /** The gateway process (the primary when it runs workers). */
  readonly pid: number;
  readonly adminPort: number;
  readonly metricsPort: number;
  /** An admin GET (`/healthz/ready`, `/status`, `/config_dump`). */
  admin(path: string): Promise<TestResponse>;
  /** Polls `check` every 100 ms until it returns true, failing with the process output after `timeoutMs`. */
  waitFor(what: string, check: () => Promise<boolean>, timeoutMs?: number): Promise<void>;
  /** SIGTERM, then the exit code (SIGKILL and a rejection if it does not exit within 10 s). */
  stop(): Promise<number | null>;
  output(): string;
}

const REPO_ROOT = resolve(import.meta.dirname, '../..');
const POLL_INTERVAL_MS = 100;

/** `args`: more flags for `run` (after the ones set here); `entry`: the CLI script to run (the production build's dist/switchboard.mjs), the sources' main.ts by default. */
export async function startCli(configDir: string, opts: { workers?: number; logLevel?: string; args?: readonly string[]; entry?: string } = {}): Promise<CliProcess> {
  const adminPort = await closedPort();
  const metricsPort = await closedPort();
  const child: ChildProcess = spawn(process.execPath, [
    opts.entry ?? 'src/cli/main.ts', 'run', '-f', configDir,
    '--admin-address', `127.0.0.1:${adminPort}`,
    '--metrics-address', `127.0.0.1:${metricsPort}`,
    '--workers', String(opts.workers ?? 1),
    '--log-level', opts.logLevel ?? 'warn',
    ...(opts.args ?? []),
  ], { cwd: REPO_ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout?.on('data', (c: Buffer) => { output += c.toString(); });
  child.stderr?.on('data', (c: Buffer) => { output += c.toString(); });
  const exited = new Promise<number | null>((ok) => child.once('exit', (code) => ok(code)));

  const cli: CliProcess = {
    pid: child.pid ?? 0,
    adminPort,
    metricsPort,
    admin: (path) => sendRequest(adminPort, { path }),
    async waitFor(what, check, timeoutMs = 15_000) {
      const attempts = Math.ceil(timeoutMs / POLL_INTERVAL_MS);
      for (let i = 0; i < attempts; i++) {
        if (child.exitCode !== null) throw new Error(`the CLI exited (${child.exitCode}) while waiting for ${what}:\n${output}`);
        if (await check().catch(() => false)) return;
        await new Promise((ok) => setTimeout(ok, POLL_INTERVAL_MS));
      }
      throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}:\n${output}`);
    },
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return child.exitCode;
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
      const code = await exited;
      clearTimeout(timer);
      return code;
    },
    output: () => output,
  };
  return cli;
}
