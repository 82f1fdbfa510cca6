/** RequestMirror: the mirror sees a copy of the request, the client sees only the main response. */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { closedPort, startEchoFleet, type EchoFleet } from '../support/fleet.ts';
import { startGateway, type GatewayHarness } from '../support/gateway.ts';
import { gateway, gatewayClass, service } from '../support/manifests.ts';

/** Mirrors are fire-and-forget: the copy may land after the client's answer, so wait for it (bounded). */
const MIRROR_WAIT_MS = 2_000;

describe('request mirror', () => {
  let fleet: EchoFleet;
  let gw: GatewayHarness;

  before(async () => {
    fleet = await startEchoFleet(['main', 'mirror']);
    gw = await startGateway(gatewayClass() + fleet.yaml + service('dead', { host: '127.0.0.1', port: await closedPort() }) + gateway('gw', [{ name: 'http', port: 80 }]) + `
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: { name: mirrored, namespace: default }
spec:
  parentRefs: [{ name: gw }]
  rules:
    - matches: [{ path: { type: PathPrefix, value: /mirror } }]
      filters:
        - type: RequestMirror
          requestMirror: { backendRef: { name: mirror, port: 8080 } }
      backendRefs: [{ name: main, port: 8080 }]
    - matches: [{ path: { type: PathPrefix, value: /dead-mirror } }]
      filters:
        - type: RequestMirror
          requestMirror: { backendRef: { name: dead, port: 8080 } }
      backendRefs: [{ name: main, port: 8080 }]
`);
  });
  after(async () => {
    await gw?.close();
    await fleet?.close();
  });

  it('copies a request without a body to the mirror', async () => {
    const before = fleet.servers.mirror.seen.length;
    const res = await gw.request(80, { path: '/mirror/no-body' });
    assert.equal(res.echo().server, 'main');
    const seen = await fleet.servers.mirror.waitForRequests(before + 1, MIRROR_WAIT_MS);
    assert.equal(seen.at(-1)?.path, '/mirror/no-body');
  });

  it('answers from the main backend and copies a request with a body to the mirror', async () => {
    const before = fleet.servers.mirror.seen.length;
    const res = await gw.request(80, { path: '/mirror/a?x=1', method: 'PUT', body: 'mirrored body', headers: { 'x-trace': 't1' } });
    assert.equal(res.status, 200);
    assert.equal(res.echo().server, 'main');
    const copy = (await fleet.servers.mirror.waitForRequests(before + 1, MIRROR_WAIT_MS))[before];
    assert.equal(copy.method, 'PUT');
    assert.equal(copy.path, '/mirror/a');
    assert.deepEqual(copy.query, { x: '1' });
    assert.equal(copy.headers['x-trace'], 't1');
    assert.equal(copy.bodySha256, res.echo().bodySha256);
  });

  it('answers normally when the mirror cannot be reached', async () => {
    const res = await gw.request(80, { path: '/dead-mirror' });
    assert.equal(res.status, 200);
    assert.equal(res.echo().server, 'main');
  });
});
