/**
 * The harness measures what it says: a gateway whose requests are answered promptly shows short
 * probes, and one that stops answering (the process held with SIGSTOP, as a blocked event loop
 * would hold it) shows the stall.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { startEchoServer, type EchoServer } from '../support/echo-server.ts';
import { gatewayClass, gateway, prefixRoute, service } from '../support/manifests.ts';
import { probeWhile, rssMiB, startHostileGateway, type HostileGateway } from './harness.ts';

describe('hostile harness', () => {
  let echo: EchoServer;
  let gw: HostileGateway;
  before(async () => {
    echo = await startEchoServer('echo');
    const yaml = gatewayClass() + gateway('gw', [{ name: 'http', port: 65000 }]).replace('port: 65000', 'port: {{listener.port}}')
      + service('echo', echo) + prefixRoute('r', '/', 'echo');
    gw = await startHostileGateway(yaml);
  });
  after(async () => { await gw?.close(); await echo?.close(); });

  it('reports prompt probes when nothing blocks the gateway', async () => {
    const report = await probeWhile(() => new Promise((ok) => setTimeout(ok, 300)), () => gw.request({ path: '/x' }));
    assert.equal(report.hostile.status, 'fulfilled');
    assert.ok(report.probes > 1);
    assert.ok(report.worstProbeMs < 1_000, `worst probe ${report.worstProbeMs} ms`);
  });

  it('reports the stall of a gateway that stops answering', async () => {
    const stall = async (): Promise<void> => {
      process.kill(gw.pid, 'SIGSTOP');
      await new Promise((ok) => setTimeout(ok, 800));
      process.kill(gw.pid, 'SIGCONT');
    };
    const report = await probeWhile(stall, () => gw.request({ path: '/x' }), { warmupMs: 100 });
    assert.ok(report.worstProbeMs >= 500, `worst probe ${report.worstProbeMs} ms`);
  });

  it('reads the gateway process memory', async () => {
    const mib = await rssMiB(gw.pid);
    assert.ok(mib > 10 && mib < 2_000, `${mib} MiB`);
  });
});
