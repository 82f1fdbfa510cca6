/**
 * `switchboard run --log-filter`: the file source logs as module `source`, so `source=info` shows
 * its info lines under a process level of `warn` (an object of a kind the gateway does not read is
 * reported once, tagged `module: source`), while the process's own info lines stay out. Run with
 * two workers: they are handed the filter as written and parse it again (a worker that could not
 * would not start, and the gateway would not turn ready).
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { startCli, type CliProcess } from '../support/cli.ts';
import { closedPort } from '../support/fleet.ts';
import { gateway, gatewayClass } from '../support/manifests.ts';

const UNREAD_KIND = `---
apiVersion: example.com/v1
kind: Widget
metadata: { name: w, namespace: default }
`;

describe('switchboard run --log-filter', () => {
  let dir: string;
  let cli: CliProcess;

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'switchboard-log-filter-'));
    writeFileSync(join(dir, 'gateway.yaml'), gatewayClass() + gateway('gw', [{ name: 'http', port: await closedPort() }]) + UNREAD_KIND);
    cli = await startCli(dir, { workers: 2, logLevel: 'warn', args: ['--log-filter', 'source=info,llm=debug', '--log-format', 'json'] });
    await cli.waitFor('/healthz/ready', async () => (await cli.admin('/healthz/ready')).status === 200);
  });
  after(async () => {
    await cli?.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  const lines = (): Record<string, unknown>[] => cli.output().split('\n').filter((l) => l.startsWith('{')).map((l) => JSON.parse(l) as Record<string, unknown>);

  it('source=info: the file source\'s info line is written, tagged module source', async () => {
    await cli.waitFor('the ignored-kind line', () => Promise.resolve(lines().some((l) => /kind the gateway does not read/.test(String(l.msg)))));
    const line = lines().find((l) => /kind the gateway does not read/.test(String(l.msg)));
    assert.equal(line?.module, 'source');
    assert.equal(line?.kind, 'example.com/Widget');
  });

  it('the process level (warn) holds for the rest: the start line is not written', () => {
    assert.equal(lines().some((l) => l.msg === 'switchboard starting'), false, cli.output());
  });
});
