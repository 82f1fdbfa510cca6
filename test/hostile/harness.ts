/**
 * The hostile suite's harness: the real CLI in a child process (so a hostile request that blocks
 * the gateway's event loop cannot block the test runner too), plus the two measures every case
 * asserts — how long an ordinary request takes while the hostile one runs, and how much memory
 * the gateway process holds.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startCli, type CliProcess } from '../support/cli.ts';
import { closedPort } from '../support/fleet.ts';
import { sendRequest, type RequestOptions, type TestResponse } from '../support/client.ts';

export interface HostileGateway extends CliProcess {
  /** The loopback port the gateway's listener was given (`{{listener.port}}` in the YAML). */
  readonly port: number;
  /** The folder the YAML was written to; a test may add or rewrite files there (the gateway reloads). */
  readonly configDir: string;
  request(opts?: RequestOptions): Promise<TestResponse>;
  /** Stops the process and removes its config folder. */
  close(): Promise<void>;
}

/**
 * Writes `yaml` (with `{{listener.port}}` replaced by a free loopback port) to a temporary folder
 * and runs `switchboard run -f` on it, waiting until `/healthz/ready` answers 200.
 */
export async function startHostileGateway(yaml: string, opts: { workers?: number; files?: Readonly<Record<string, string>>; logLevel?: string } = {}): Promise<HostileGateway> {
  const port = await closedPort();
  const configDir = mkdtempSync(join(tmpdir(), 'switchboard-hostile-'));
  writeFileSync(join(configDir, 'gateway.yaml'), yaml.replaceAll('{{listener.port}}', String(port)));
  for (const [name, text] of Object.entries(opts.files ?? {})) writeFileSync(join(configDir, name), text);
  const cli = await startCli(configDir, { workers: opts.workers ?? 1, ...(opts.logLevel ? { logLevel: opts.logLevel } : {}) });
  try {
    await cli.waitFor('the gateway to be ready', async () => (await cli.admin('/healthz/ready')).status === 200);
  } catch (err) {
    await cli.stop();
    rmSync(configDir, { recursive: true, force: true });
    throw err;
  }
  return {
    ...cli,
    port,
    configDir,
    request: (o) => sendRequest(port, o),
    async close() {
      await cli.stop();
      rmSync(configDir, { recursive: true, force: true });
    },
  };
}

export interface StallReport {
  /** The slowest ordinary request made while the hostile work ran, in milliseconds. */
  readonly worstProbeMs: number;
  readonly probes: number;
  /** What the hostile work resolved with, or the error it rejected with. */
  readonly hostile: PromiseSettledResult<unknown>;
}

/**
 * Starts `hostile`, then keeps making ordinary requests with `probe` (one after another, from
 * `warmupMs` after the start until the hostile work settles or `maxMs` passes) and reports the
 * slowest. A gateway whose event loop the hostile work blocks shows it as one long probe.
 */
export async function probeWhile(hostile: () => Promise<unknown>, probe: () => Promise<unknown>, opts: { warmupMs?: number; maxMs?: number } = {}): Promise<StallReport> {
  const maxMs = opts.maxMs ?? 10_000;
  let settled: PromiseSettledResult<unknown> | undefined;
  const running = hostile().then(
    (value) => { settled = { status: 'fulfilled', value }; },
    (reason: unknown) => { settled = { status: 'rejected', reason }; },
  );
  await new Promise((ok) => setTimeout(ok, opts.warmupMs ?? 50));
  const started = performance.now();
  let worst = 0;
  let probes = 0;
  while (settled === undefined && performance.now() - started < maxMs) {
    const t0 = performance.now();
    await probe();
    worst = Math.max(worst, performance.now() - t0);
    probes++;
  }
  // At least one probe even when the hostile work finished during the warm-up.
  if (probes === 0) {
    const t0 = performance.now();
    await probe();
    worst = performance.now() - t0;
    probes = 1;
  }
  await running;
  return { worstProbeMs: worst, probes, hostile: settled ?? { status: 'rejected', reason: new Error('hostile work did not settle') } };
}

/** Resident memory of a process in MiB, from /proc (Linux). */
export async function rssMiB(pid: number): Promise<number> {
  const status = await readFile(`/proc/${pid}/status`, 'utf8');
  const kb = /^VmRSS:\s+(\d+)\s+kB/m.exec(status);
  if (!kb) throw new Error(`no VmRSS for process ${pid}`);
  return Number(kb[1]) / 1024;
}

/**
 * The slowest an ordinary request may take while hostile work runs. Generous for a loaded 2-core
 * CI machine running tests in parallel, and still far below every stall the hostile cases caused
 * before their bound (13 s and more).
 */
export const PROMPT_MS = 1_500;
