/**
 * Hostname intersection between listeners and routes (Gateway API: a route serves the
 * intersection of its hostnames with the listener's; a route with none in common is not accepted).
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startEchoFleet, type EchoFleet } from '../support/fleet.ts';
import { conditionOf, routeParentConditions, startGateway, type GatewayHarness } from '../support/gateway.ts';
import { gateway, gatewayClass } from '../support/manifests.ts';

function route(name: string, section: string, hostnames: string[], backend: string): string {
  return `
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: { name: ${name}, namespace: default }
spec:
  parentRefs: [{ name: gw, sectionName: ${section} }]
  hostnames: ${JSON.stringify(hostnames)}
  rules: [{ backendRefs: [{ name: ${backend}, port: 8080 }] }]
`;
}

describe('hostname intersection', () => {
  let fleet: EchoFleet;
  let gw: GatewayHarness;

  before(async () => {
    fleet = await startEchoFleet(['exact', 'wild', 'none', 'specific']);
    gw = await startGateway(gatewayClass() + fleet.yaml + gateway('gw', [
      { name: 'wildcard', port: 80, hostname: '*.example.com' },
      { name: 'any', port: 8080 },
      { name: 'specific', port: 8081, hostname: 'very.specific.com' },
    ]) +
      route('exact-host', 'wildcard', ['foo.example.com'], 'exact') +
      route('wildcard-host', 'wildcard', ['*.bar.example.com'], 'wild') +
      route('no-hostnames', 'any', [], 'none') +
      route('wider-than-listener', 'specific', ['*.specific.com'], 'specific') +
      route('disjoint', 'wildcard', ['other.org'], 'none'));
  });
  after(async () => {
    await gw?.close();
    await fleet?.close();
  });

  const cases: { name: string; port: number; host: string; server?: string }[] = [
    { name: 'exact route hostname under a wildcard listener', port: 80, host: 'foo.example.com', server: 'exact' },
    { name: 'Host header with a port still matches', port: 80, host: 'foo.example.com:1234', server: 'exact' },
    { name: 'route wildcard matches a deeper subdomain', port: 80, host: 'a.bar.example.com', server: 'wild' },
    { name: 'route wildcard does not match its own suffix', port: 80, host: 'bar.example.com' },
    { name: 'host outside the listener hostname', port: 80, host: 'other.org' },
    { name: 'route without hostnames serves any host', port: 8080, host: 'anything.test', server: 'none' },
    { name: 'route wildcard narrowed to the listener hostname', port: 8081, host: 'very.specific.com', server: 'specific' },
    { name: 'sibling of the listener hostname', port: 8081, host: 'other.specific.com' },
  ];
  for (const c of cases) {
    it(`${c.name}: ${c.host} on :${c.port} → ${c.server ?? '404'}`, async () => {
      const res = await gw.request(c.port, { host: c.host, path: '/' });
      if (c.server === undefined) return assert.equal(res.status, 404);
      assert.equal(res.status, 200);
      assert.equal(res.echo().server, c.server);
    });
  }

  it('does not accept a route whose hostnames miss the listener', () => {
    const accepted = conditionOf(routeParentConditions(gw.statusOf('HTTPRoute', 'disjoint')), 'Accepted');
    assert.equal(accepted?.status, 'False');
    assert.equal(accepted?.reason, 'NoMatchingListenerHostname');
  });

  it('accepts a route whose wildcard covers the listener hostname', () => {
    const accepted = conditionOf(routeParentConditions(gw.statusOf('HTTPRoute', 'wider-than-listener')), 'Accepted');
    assert.equal(accepted?.status, 'True');
  });
});
