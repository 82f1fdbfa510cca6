/**
 * The embedded mode end to end: `switchboard run -f DIR` serves the objects in DIR, reports
 * readiness, status and config on the admin port, applies a file change without a restart, and
 * exits 0 on SIGTERM.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { startCli, type CliProcess } from '../support/cli.ts';
import { sendRequest } from '../support/client.ts';
import { startEchoServer, type EchoServer } from '../support/echo-server.ts';
import { closedPort } from '../support/fleet.ts';
import { conditionOf, routeParentConditions } from '../support/gateway.ts';
import { gateway, gatewayClass, service } from '../support/manifests.ts';

function route(name: string, path: string): string {
  return `
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: { name: ${name}, namespace: default }
spec:
  parentRefs: [{ name: gw }]
  rules:
    - matches: [{ path: { type: PathPrefix, value: ${path} } }]
      backendRefs: [{ name: echo, port: 8080 }]
`;
}

describe('switchboard run (embedded mode)', () => {
  let echo: EchoServer;
  let dir: string;
  let port: number;
  let cli: CliProcess;

  before(async () => {
    echo = await startEchoServer('echo');
    port = await closedPort();
    dir = mkdtempSync(join(tmpdir(), 'switchboard-cli-e2e-'));
    writeFileSync(join(dir, 'gateway.yaml'), gatewayClass() + gateway('gw', [{ name: 'http', port }]) + service('echo', echo));
    writeFileSync(join(dir, 'route-first.yaml'), route('first', '/first'));
    cli = await startCli(dir);
    await cli.waitFor('/healthz/ready', async () => (await cli.admin('/healthz/ready')).status === 200);
  });
  after(async () => {
    await cli?.stop();
    await echo?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('proxies to the routed backend on the Gateway port', async () => {
    const res = await sendRequest(port, { path: '/first/x' });
    assert.equal(res.status, 200);
    assert.equal(res.echo().path, '/first/x');
  });

  it('serves route status on /status', async () => {
    const body = JSON.parse((await cli.admin('/status')).text) as { items: { kind: string; metadata: { name: string }; status: Record<string, unknown> }[] };
    const first = body.items.find((i) => i.kind === 'HTTPRoute' && i.metadata.name === 'first');
    assert.ok(first, 'HTTPRoute first has a status');
    assert.equal(conditionOf(routeParentConditions(first.status), 'Accepted')?.status, 'True');
  });

  it('serves the applied IR on /config_dump', async () => {
    const config = JSON.parse((await cli.admin('/config_dump')).text) as { version: string; routes: Record<string, unknown> };
    assert.equal(typeof config.version, 'string');
    assert.ok('default/first' in config.routes);
  });

  it('applies a new file without a restart', async () => {
    writeFileSync(join(dir, 'route-second.yaml'), route('second', '/second'));
    await cli.waitFor('the new route to serve', async () => (await sendRequest(port, { path: '/second' })).status === 200);
    assert.equal((await sendRequest(port, { path: '/first' })).status, 200, 'the first route still serves');
  });

  it('exits 0 on SIGTERM', async () => {
    assert.equal(await cli.stop(), 0, cli.output());
  });
});
