/**
 * A real `switchboard controller` process against the fake API server, as a test starts it: a
 * kubeconfig file written from the server, its ports below the ephemeral range, leader election in
 * `switchboard-system`, and POD_NAME `controller-0` (the Lease holder is `controller-0_…`).
 */
import { spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { closedPort } from '../support/fleet.ts';
import type { FakeApiServer } from './fake-apiserver.ts';

export interface ControllerProcess {
  readonly healthPort: number;
  readonly metricsPort: number;
  /** stdout and stderr so far. */
  output(): string;
  /** Resolves once /healthz/ready answers 200; rejects with the output if it exits or `timeoutMs` passes first. */
  waitReady(timeoutMs?: number): Promise<void>;
  /** SIGTERM, then the exit code. */
  stop(): Promise<number | null>;
}

/** `script`: the CLI to run (src/cli/main.ts, or the production build's dist/switchboard.mjs); `dir` holds the kubeconfig. */
export async function startControllerProcess(server: FakeApiServer, script: string, dir: string, opts: { cwd?: string } = {}): Promise<ControllerProcess> {
  const kubeconfig = join(dir, 'kubeconfig');
  writeFileSync(kubeconfig, server.kubeConfigYaml());
  const [health, metrics, admin, xds] = await Promise.all([closedPort(), closedPort(), closedPort(), closedPort()]);
  const child = spawn(process.execPath, [
    script, 'controller', '--kubeconfig', kubeconfig, '--xds-mode', 'plaintext',
    '--health-address', `127.0.0.1:${health}`, '--metrics-address', `127.0.0.1:${metrics}`, '--admin-address', `127.0.0.1:${admin}`, '--xds-address', `127.0.0.1:${xds}`,
    '--leader-election-namespace', 'switchboard-system', '--log-level', 'warn',
  ], { ...(opts.cwd ? { cwd: opts.cwd } : {}), stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, KUBECONFIG: '/nonexistent', POD_NAME: 'controller-0' } });
  let output = '';
  child.stdout.on('data', (c: Buffer) => { output += c.toString(); });
  child.stderr.on('data', (c: Buffer) => { output += c.toString(); });
  const exited = new Promise<number | null>((ok) => child.once('exit', (code) => ok(code)));
  return {
    healthPort: health,
    metricsPort: metrics,
    output: () => output,
    async waitReady(timeoutMs = 20_000) {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const ready = await fetch(`http://127.0.0.1:${health}/healthz/ready`).then((r) => r.status === 200, () => false);
        if (ready) return;
        if (Date.now() > deadline || child.exitCode !== null) throw new Error(`the controller did not get ready:\n${output}`);
        await new Promise((r) => setTimeout(r, 100));
      }
    },
    async stop() {
      if (child.exitCode === null) child.kill('SIGTERM');
      return exited;
    },
  };
}
