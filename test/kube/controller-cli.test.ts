/**
 * The real `switchboard controller` process against the fake API server: loads a kubeconfig
 * file (token auth), becomes ready, takes the leader Lease and, on SIGTERM, releases it and exits 0.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { closedPort } from '../support/fleet.ts';
import { FakeApiServer } from './fake-apiserver.ts';

const REPO_ROOT = resolve(import.meta.dirname, '../..');

describe('switchboard controller (process)', () => {
  let server: FakeApiServer;
  before(async () => { server = await FakeApiServer.start({ token: 'controller-token' }); });
  after(async () => { await server.close(); });

  it('reads its kubeconfig, gets ready, leads, and releases the Lease on SIGTERM', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'controller-cli-'));
    const kubeconfig = join(dir, 'kubeconfig');
    writeFileSync(kubeconfig, server.kubeConfigYaml());
    const [health, metrics, admin, xds] = await Promise.all([closedPort(), closedPort(), closedPort(), closedPort()]);
    const child = spawn(process.execPath, [
      'src/cli/main.ts', 'controller', '--kubeconfig', kubeconfig, '--xds-mode', 'plaintext',
      '--health-address', `127.0.0.1:${health}`, '--metrics-address', `127.0.0.1:${metrics}`, '--admin-address', `127.0.0.1:${admin}`, '--xds-address', `127.0.0.1:${xds}`,
      '--leader-election-namespace', 'switchboard-system', '--log-level', 'warn',
    ], { cwd: REPO_ROOT, stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, KUBECONFIG: '/nonexistent', POD_NAME: 'controller-0' } });
    let output = '';
    child.stdout.on('data', (c: Buffer) => { output += c.toString(); });
    child.stderr.on('data', (c: Buffer) => { output += c.toString(); });
    const exited = new Promise<number | null>((ok) => child.once('exit', (code) => ok(code)));
    try {
      const deadline = Date.now() + 20_000;
      for (;;) {
        const ready = await fetch(`http://127.0.0.1:${health}/healthz/ready`).then((r) => r.status === 200, () => false);
        if (ready) break;
        if (Date.now() > deadline || child.exitCode !== null) throw new Error(`the controller did not get ready:\n${output}`);
        await new Promise((r) => setTimeout(r, 100));
      }
      const lease = server.get('coordination.k8s.io/v1', 'Lease', 'switchboard-controller', 'switchboard-system')?.spec as { holderIdentity?: string } | undefined;
      assert.match(lease?.holderIdentity ?? '', /^controller-0_/);
      const scrape = await (await fetch(`http://127.0.0.1:${metrics}/metrics`)).text();
      assert.match(scrape, /process_cpu_user_seconds_total/);
    } finally {
      child.kill('SIGTERM');
    }
    assert.equal(await exited, 0, output);
    const released = server.get('coordination.k8s.io/v1', 'Lease', 'switchboard-controller', 'switchboard-system')?.spec as { holderIdentity?: string };
    assert.equal(released.holderIdentity, '', 'the Lease is released for the next leader');
  });
});
