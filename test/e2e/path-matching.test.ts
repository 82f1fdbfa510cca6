/**
 * Path matching: Exact, PathPrefix on segment boundaries (a trailing `/` in the prefix is
 * ignored), RegularExpression on the whole path, and the precedence Exact > longest prefix.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startEchoFleet, type EchoFleet } from '../support/fleet.ts';
import { startGateway, type GatewayHarness } from '../support/gateway.ts';
import { gateway, gatewayClass } from '../support/manifests.ts';

function rule(type: string, value: string, backend: string): string {
  return `
    - matches: [{ path: { type: ${type}, value: '${value}' } }]
      backendRefs: [{ name: ${backend}, port: 8080 }]`;
}

describe('path matching', () => {
  let fleet: EchoFleet;
  let gw: GatewayHarness;

  before(async () => {
    fleet = await startEchoFleet(['exact', 'prefix', 'longer', 'nested-exact', 'trailing', 'regex']);
    gw = await startGateway(gatewayClass() + fleet.yaml + gateway('gw', [{ name: 'http', port: 80 }]) + `
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: { name: paths, namespace: default }
spec:
  parentRefs: [{ name: gw }]
  rules:` +
      rule('PathPrefix', '/prefix', 'prefix') +
      rule('PathPrefix', '/prefix/longer', 'longer') +
      rule('Exact', '/prefix/exact', 'nested-exact') +
      rule('Exact', '/exact', 'exact') +
      rule('PathPrefix', '/trailing/', 'trailing') +
      rule('RegularExpression', '/regex/[0-9]+', 'regex'));
  });
  after(async () => {
    await gw?.close();
    await fleet?.close();
  });

  const cases: { path: string; server?: string }[] = [
    { path: '/exact', server: 'exact' },
    { path: '/exact?x=1', server: 'exact' },
    { path: '/exact/' },
    { path: '/exactly' },
    { path: '/prefix', server: 'prefix' },
    { path: '/prefix/', server: 'prefix' },
    { path: '/prefix/one', server: 'prefix' },
    { path: '/prefixed' },
    { path: '/prefix/longer', server: 'longer' },
    { path: '/prefix/longer/deeper', server: 'longer' },
    { path: '/prefix/longerish', server: 'prefix' },
    { path: '/prefix/exact', server: 'nested-exact' },
    { path: '/prefix/exact/more', server: 'prefix' },
    { path: '/trailing', server: 'trailing' },
    { path: '/trailing/x', server: 'trailing' },
    { path: '/trailingx' },
    { path: '/regex/123', server: 'regex' },
    { path: '/regex/abc' },
    { path: '/regex/123/more' },
    { path: '/' },
  ];
  for (const c of cases) {
    it(`${c.path} → ${c.server ?? '404'}`, async () => {
      const res = await gw.request(80, { path: c.path, host: 'paths.example' });
      if (c.server === undefined) return assert.equal(res.status, 404);
      assert.equal(res.status, 200);
      assert.equal(res.echo().server, c.server);
    });
  }
});
