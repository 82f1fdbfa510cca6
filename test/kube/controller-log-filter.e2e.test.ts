/**
 * `switchboard controller --log-filter`: each part of the controller logs through its own module
 * logger (kube, status, provision, leader, xds), so a filter's module entry reaches it. Fake API
 * server → controller at process level `warn` with module entries that lower some parts to `info`
 * and raise `kube` to `error`: the info lines of the lowered parts appear, tagged with their
 * module; the process's own info line does not; kube's warning about a failed list does not.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { parseAllDocuments } from 'yaml';
import { parseControllerArgs } from '../../src/cli/commands/controller-args.ts';
import { startController, type RunningController } from '../../src/cli/commands/controller.ts';
import { createLogger } from '../../src/common/logger.ts';
import { closedPort } from '../support/fleet.ts';
import { gatewayClass } from '../support/manifests.ts';
import { FakeApiServer } from './fake-apiserver.ts';

const GW = 'gateway.networking.k8s.io/v1';
const NS = 'apps';
const FILTER = 'warn,kube=error,status=info,provision=info,leader=info,xds=info';

async function until(check: () => boolean, what: string, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

describe('switchboard controller --log-filter: module levels reach the controller\'s parts', () => {
  let server: FakeApiServer;
  let controller: RunningController | undefined;
  const lines: { module?: string; msg?: string; level?: number }[] = [];
  const lineOf = (msg: RegExp) => lines.find((l) => msg.test(l.msg ?? ''));

  before(async () => {
    server = await FakeApiServer.start({ bookmarkIntervalMs: 200 });
    server.put({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: NS } });
    for (const doc of parseAllDocuments(gatewayClass())) server.put(doc.toJS() as Record<string, unknown>);
    server.put({ apiVersion: GW, kind: 'Gateway', metadata: { name: 'gw', namespace: NS }, spec: { gatewayClassName: 'switchboard', listeners: [{ name: 'http', port: await closedPort(), protocol: 'HTTP' }] } });
    // The first list of HTTPRoutes fails: the kube source warns and retries.
    server.failNext('GET', /\/httproutes$/, 500);
    const options = parseControllerArgs([
      '--health-address', '127.0.0.1:0', '--metrics-address', '127.0.0.1:0', '--admin-address', '127.0.0.1:0', '--xds-address', '127.0.0.1:0',
      '--xds-mode', 'plaintext', '--leader-election-namespace', NS, '--log-filter', FILTER,
    ], {});
    if (options === 'help') throw new Error('unreachable');
    // What controller() makes from the options, writing to this test.
    const logger = createLogger({ level: options.logLevel, format: 'json', ...(options.logFilter ? { filter: options.logFilter } : {}), destination: { write: (line: string) => lines.push(JSON.parse(line) as (typeof lines)[number]) } });
    controller = await startController(options, { kubeConfig: server.kubeConfig(), logger, lease: { leaseDurationMs: 1500, renewDeadlineMs: 1000, retryPeriodMs: 50 } });
    await until(() => server.get('v1', 'Secret', 'gw-session-key', NS) !== undefined && lineOf(/status changed/) !== undefined, 'the session key Secret and a status change');
  });
  after(async () => {
    await controller?.stop();
    await server?.close();
  });

  const lowered: { module: string; msg: RegExp }[] = [
    { module: 'xds', msg: /^config distribution listening$/ },
    { module: 'leader', msg: /^became the leader$/ },
    { module: 'provision', msg: /session key Secret/ },
    { module: 'status', msg: /^status changed$/ },
  ];
  for (const row of lowered) {
    it(`${row.module}=info: its info line appears under the process's warn, tagged module ${row.module}`, async () => {
      await until(() => lineOf(row.msg) !== undefined, row.msg.source).catch((err: Error) => { throw new Error(`${err.message}; lines: ${JSON.stringify(lines.map((l) => l.msg))}`); });
      assert.equal(lineOf(row.msg)?.module, row.module);
    });
  }

  it('the process level holds for what no entry names: the start line (info) is not written', () => {
    assert.equal(lineOf(/switchboard controller ready/), undefined);
  });

  it('kube=error: the kube source\'s warning about the failed list is not written', () => {
    assert.ok(server.requests.filter((r) => r.method === 'GET' && /\/httproutes$/.test(r.path)).length >= 2, 'the list failed and was retried');
    assert.equal(lineOf(/list\/watch failed/), undefined);
  });
});
