/**
 * `switchboard proxy` as a process honours ProxyParameters `shutdown` on SIGTERM
 * (src/cli/commands/proxy-shutdown.ts): not ready at once, still accepting for
 * CONNECTION_MIN_TERMINATION_DEADLINE, then drain and exit 0 within TERMINATION_GRACE_PERIOD_SECONDS.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import { CLI, freePort, REPO_ROOT, tempDir } from '../cli/harness.ts';

async function status(port: number, urlPath: string): Promise<number | undefined> {
  try {
    return (await fetch(`http://127.0.0.1:${port}${urlPath}`)).status;
  } catch {
    return undefined;
  }
}

describe('switchboard proxy: SIGTERM with ProxyParameters shutdown', () => {
  it('keeps accepting (not ready) for min, then exits 0 before max', async () => {
    const dir = tempDir('proxy-shutdown');
    const token = path.join(dir, 'token');
    fs.writeFileSync(token, 'token\n');
    const [metrics, closed] = [await freePort(), await freePort()];
    const child = spawn(process.execPath, [CLI, 'proxy', '--controller', `http://127.0.0.1:${closed}`, '--gateway', 'gw', '--namespace', 'apps', '--token-file', token, '--metrics-address', `127.0.0.1:${metrics}`, '--log-level', 'silent'], {
      cwd: REPO_ROOT, env: { ...process.env, CONNECTION_MIN_TERMINATION_DEADLINE: '2', TERMINATION_GRACE_PERIOD_SECONDS: '5' }, stdio: 'ignore',
    });
    const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
    try {
      const deadline = Date.now() + 15_000;
      while ((await status(metrics, '/metrics')) !== 200) {
        if (Date.now() > deadline) throw new Error('the proxy did not start');
        await new Promise((r) => setTimeout(r, 50));
      }
      const signalled = Date.now();
      child.kill('SIGTERM');
      await new Promise((r) => setTimeout(r, 800));
      assert.equal(await status(metrics, '/metrics'), 200, 'still accepting during min');
      assert.equal(await status(metrics, '/healthz/ready'), 503, 'not ready');
      const code = await exited;
      const elapsed = Date.now() - signalled;
      assert.equal(code, 0);
      assert.ok(elapsed >= 2000, `exited after ${elapsed} ms, before min (2 s)`);
      assert.ok(elapsed < 5000, `exited after ${elapsed} ms, not before max (5 s)`);
    } finally {
      child.kill('SIGKILL');
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
