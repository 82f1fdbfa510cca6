/**
 * Weighted backendRefs: traffic splits by weight within a tolerance over a bounded number of
 * requests; a weight-0 backend never receives traffic; a rule whose weights are all 0 answers 500.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startEchoFleet, type EchoFleet } from '../support/fleet.ts';
import { startGateway, type GatewayHarness } from '../support/gateway.ts';
import { gateway, gatewayClass } from '../support/manifests.ts';

const REQUESTS = 200;

describe('weighted backends', () => {
  let fleet: EchoFleet;
  let gw: GatewayHarness;

  before(async () => {
    fleet = await startEchoFleet(['heavy', 'light', 'never']);
    gw = await startGateway(gatewayClass() + fleet.yaml + gateway('gw', [{ name: 'http', port: 80 }]) + `
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: { name: weighted, namespace: default }
spec:
  parentRefs: [{ name: gw }]
  rules:
    - matches: [{ path: { type: PathPrefix, value: /split } }]
      backendRefs:
        - { name: heavy, port: 8080, weight: 3 }
        - { name: light, port: 8080, weight: 1 }
        - { name: never, port: 8080, weight: 0 }
    - matches: [{ path: { type: PathPrefix, value: /all-zero } }]
      backendRefs:
        - { name: never, port: 8080, weight: 0 }
`);
  });
  after(async () => {
    await gw?.close();
    await fleet?.close();
  });

  it(`splits ${REQUESTS} requests 3:1 and never picks weight 0`, async () => {
    const counts: Record<string, number> = { heavy: 0, light: 0, never: 0 };
    for (let i = 0; i < REQUESTS; i++) {
      const res = await gw.request(80, { path: `/split?i=${i}` });
      assert.equal(res.status, 200);
      counts[res.echo().server] += 1;
    }
    assert.equal(counts.never, 0);
    assert.equal(counts.heavy + counts.light, REQUESTS);
    // Expected 150/50. ±30 is about five standard deviations of a fair random pick (σ≈6.1) and
    // far inside what a wrong split (1:1 gives 100, 1:3 gives 50) would produce.
    assert.ok(Math.abs(counts.heavy - 150) <= 30, `heavy got ${counts.heavy} of ${REQUESTS}`);
    assert.equal(fleet.servers.never.seen.length, 0);
  });

  it('answers 500 when every backend has weight 0', async () => {
    const res = await gw.request(80, { path: '/all-zero' });
    assert.equal(res.status, 500);
    assert.equal(fleet.servers.never.seen.length, 0);
  });
});
