/** traffic.phase PreRouting: runs on the listener before a route is chosen, and its effects carry into routing and PostRouting. */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startEchoServer, type EchoServer } from '../support/echo-server.ts';
import { startGateway, type GatewayHarness } from '../support/gateway.ts';
import { gateway, gatewayClass, prefixRoute, routeTrafficPolicy, service } from '../support/manifests.ts';

/** A ProxyPolicy on Gateway `gw`, listener `sectionName` when given. */
function gatewayPolicy(name: string, traffic: string, sectionName?: string): string {
  return `
---
apiVersion: switchboard.dev/v1alpha1
kind: ProxyPolicy
metadata: { name: ${name}, namespace: default }
spec:
  targetRefs: [{ group: gateway.networking.k8s.io, kind: Gateway, name: gw${sectionName ? `, sectionName: ${sectionName}` : ''} }]
  traffic:
${traffic.replace(/^/gm, '    ')}
`;
}

describe('PreRouting traffic policies end to end', () => {
  let gold: EchoServer;
  let standard: EchoServer;
  let gw: GatewayHarness;

  before(async () => {
    gold = await startEchoServer('gold');
    standard = await startEchoServer('standard');
    gw = await startGateway(
      gatewayClass() + service('gold', gold) + service('standard', standard) +
      gateway('gw', [{ name: 'pre', port: 80 }, { name: 'plain', port: 81 }]) +
      `
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: { name: tiers, namespace: default }
spec:
  parentRefs: [{ name: gw }]
  rules:
    - matches: [{ path: { type: PathPrefix, value: /tier }, headers: [{ name: x-tier, value: gold }] }]
      backendRefs: [{ name: gold, port: 8080 }]
    - matches: [{ path: { type: PathPrefix, value: /tier } }]
      backendRefs: [{ name: standard, port: 8080 }]
---
apiVersion: v1
kind: Secret
metadata: { name: api-keys, namespace: default }
stringData:
  alice: sk-alice
  bob: sk-bob
` +
      prefixRoute('admin', '/admin', 'standard') +
      routeTrafficPolicy('admin-only-alice', 'admin', `authorization:
  policy: { matchExpressions: ['apiKey.name == "alice"'] }`) +
      // PreRouting on listener `pre` only: authenticate every request, then mark alice's as gold.
      gatewayPolicy('pre', `phase: PreRouting
apiKeyAuthentication: { secretRef: { name: api-keys } }
transformation:
  request:
    set: [{ name: x-tier, value: 'apiKey.name == "alice" ? "gold" : "standard"' }]`, 'pre'),
    );
    assert.deepEqual(gw.applyErrors, []);
  });
  after(async () => {
    await gw?.close();
    await gold?.close();
    await standard?.close();
  });

  const auth = (key: string) => ({ authorization: `Bearer ${key}` });

  it('a header set by PreRouting decides which route matches', async () => {
    const alice = await gw.request(80, { path: '/tier', headers: auth('sk-alice') });
    assert.equal(alice.status, 200);
    assert.equal(alice.echo().server, 'gold');
    assert.equal(alice.echo().headers['x-tier'], 'gold');
    const bob = await gw.request(80, { path: '/tier', headers: auth('sk-bob') });
    assert.equal(bob.status, 200);
    assert.equal(bob.echo().server, 'standard');
  });

  it('a client cannot choose the gold route itself: PreRouting overwrites its header', async () => {
    const bob = await gw.request(80, { path: '/tier', headers: { ...auth('sk-bob'), 'x-tier': 'gold' } });
    assert.equal(bob.echo().server, 'standard');
  });

  it('rejects before routing: no key gets 401 even where no route matches', async () => {
    assert.equal((await gw.request(80, { path: '/tier' })).status, 401);
    assert.equal((await gw.request(80, { path: '/no-such-route' })).status, 401);
    assert.equal((await gw.request(80, { path: '/no-such-route', headers: auth('sk-bob') })).status, 404);
  });

  it('the identity PreRouting established is what PostRouting authorization sees', async () => {
    assert.equal((await gw.request(80, { path: '/admin', headers: auth('sk-alice') })).status, 200);
    assert.equal((await gw.request(80, { path: '/admin', headers: auth('sk-bob') })).status, 403);
  });

  it('a listener without the PreRouting policy routes on the client\'s own headers', async () => {
    const res = await gw.request(81, { path: '/tier', headers: { 'x-tier': 'gold' } });
    assert.equal(res.status, 200);
    assert.equal(res.echo().server, 'gold');
    // No PreRouting identity on this listener: the route's authorization sees no apiKey and denies.
    assert.equal((await gw.request(81, { path: '/admin', headers: auth('sk-alice') })).status, 403);
  });
});
