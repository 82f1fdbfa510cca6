/**
 * The real `switchboard controller` process against the fake API server: loads a kubeconfig
 * file (token auth), becomes ready, takes the leader Lease and, on SIGTERM, releases it and exits 0.
 */
import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { startControllerProcess } from './controller-process.ts';
import { FakeApiServer } from './fake-apiserver.ts';

const REPO_ROOT = resolve(import.meta.dirname, '../..');

describe('switchboard controller (process)', () => {
  let server: FakeApiServer;
  before(async () => { server = await FakeApiServer.start({ token: 'controller-token' }); });
  after(async () => { await server.close(); });

  it('reads its kubeconfig, gets ready, leads, and releases the Lease on SIGTERM', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'controller-cli-'));
    const controller = await startControllerProcess(server, 'src/cli/main.ts', dir, { cwd: REPO_ROOT });
    try {
      await controller.waitReady();
      const lease = server.get('coordination.k8s.io/v1', 'Lease', 'switchboard-controller', 'switchboard-system')?.spec as { holderIdentity?: string } | undefined;
      assert.match(lease?.holderIdentity ?? '', /^controller-0_/);
      const scrape = await (await fetch(`http://127.0.0.1:${controller.metricsPort}/metrics`)).text();
      assert.match(scrape, /process_cpu_user_seconds_total/);
    } catch (err) {
      await controller.stop();
      throw err;
    }
    assert.equal(await controller.stop(), 0, controller.output());
    const released = server.get('coordination.k8s.io/v1', 'Lease', 'switchboard-controller', 'switchboard-system')?.spec as { holderIdentity?: string };
    assert.equal(released.holderIdentity, '', 'the Lease is released for the next leader');
  });
});
