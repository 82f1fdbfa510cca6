/**
 * frontend `metrics.attributes` through the real CLI: CEL labels on the request metrics of the
 * Gateway's binds, `unknown` when an expression fails, request-fed values capped (metric-attributes.ts).
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
import { gateway, gatewayClass, prefixRoute, service } from '../support/manifests.ts';

describe('frontend metrics.attributes', () => {
  let dir: string;
  let echo: EchoServer;
  let cli: CliProcess;
  let port: number;

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'switchboard-metric-attributes-'));
    echo = await startEchoServer('echo');
    port = await closedPort();
    writeFileSync(join(dir, 'gateway.yaml'), gatewayClass() + gateway('gw', [{ name: 'http', port }]) + service('echo', echo) + prefixRoute('echo', '/', 'echo') + `---
apiVersion: switchboard.dev/v1alpha1
kind: ProxyPolicy
metadata: { name: labels }
spec:
  targetRefs: [{ group: gateway.networking.k8s.io, kind: Gateway, name: gw }]
  frontend:
    metrics:
      attributes:
        add:
          - { name: team, expression: 'request.headers["x-team"]' }
          - { name: user.tier, expression: 'request.headers["x-not-sent"]' }
`);
    cli = await startCli(dir);
    await cli.waitFor('the gateway to be ready', async () => (await cli.admin('/healthz/ready')).status === 200);
  });

  after(async () => {
    await cli?.stop();
    await echo?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('each request is counted under its CEL labels; a failing expression is "unknown"', async () => {
    for (const team of ['red', 'red', 'blue']) assert.equal((await sendRequest(port, { path: '/', headers: { 'x-team': team } })).status, 200);
    const metrics = (await sendRequest(cli.metricsPort, { path: '/metrics' })).text;
    const count = (team: string): number => {
      const line = new RegExp(`^switchboard_requests_total\\{[^}]*route="default/echo"[^}]*status="200",team="${team}",user_tier="unknown"\\} (\\d+)$`, 'm').exec(metrics);
      return line ? Number(line[1]) : 0;
    };
    assert.equal(count('red'), 2, metrics.split('\n').filter((l) => l.startsWith('switchboard_requests_total')).join('\n'));
    assert.equal(count('blue'), 1);
    assert.match(metrics, /^switchboard_request_duration_seconds_count\{[^}]*team="blue",user_tier="unknown"\} 1$/m);
  });
});
