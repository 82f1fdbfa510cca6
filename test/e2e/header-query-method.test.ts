/**
 * Header, query and method matches: AND within a match, OR across a rule's matches, header names
 * case-insensitive, values exact or RE2 regular expressions.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startEchoFleet, type EchoFleet } from '../support/fleet.ts';
import { startGateway, type GatewayHarness } from '../support/gateway.ts';
import { gateway, gatewayClass } from '../support/manifests.ts';

describe('header, query and method matching', () => {
  let fleet: EchoFleet;
  let gw: GatewayHarness;

  before(async () => {
    fleet = await startEchoFleet(['version-one', 'version-two-blue', 'numeric-id', 'whale', 'post', 'either']);
    gw = await startGateway(gatewayClass() + fleet.yaml + gateway('gw', [{ name: 'http', port: 80 }]) + `
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: { name: matching, namespace: default }
spec:
  parentRefs: [{ name: gw }]
  rules:
    - matches: [{ path: { type: Exact, value: /headers }, headers: [{ name: Version, value: one }] }]
      backendRefs: [{ name: version-one, port: 8080 }]
    - matches: [{ path: { type: Exact, value: /headers }, headers: [{ name: version, value: two }, { name: color, value: blue }] }]
      backendRefs: [{ name: version-two-blue, port: 8080 }]
    - matches: [{ path: { type: Exact, value: /regex }, headers: [{ type: RegularExpression, name: x-id, value: '[0-9]+' }] }]
      backendRefs: [{ name: numeric-id, port: 8080 }]
    - matches: [{ path: { type: Exact, value: /query }, queryParams: [{ name: animal, value: whale }] }]
      backendRefs: [{ name: whale, port: 8080 }]
    - matches: [{ path: { type: Exact, value: /method }, method: POST }]
      backendRefs: [{ name: post, port: 8080 }]
    - matches:
        - { path: { type: Exact, value: /or }, headers: [{ name: env, value: canary }] }
        - { path: { type: Exact, value: /or }, queryParams: [{ name: env, value: canary }] }
      backendRefs: [{ name: either, port: 8080 }]
`);
  });
  after(async () => {
    await gw?.close();
    await fleet?.close();
  });

  const cases: { name: string; path: string; method?: string; headers?: Record<string, string>; server?: string }[] = [
    { name: 'header exact, name case-insensitive', path: '/headers', headers: { VERSION: 'one' }, server: 'version-one' },
    { name: 'header value is case-sensitive', path: '/headers', headers: { version: 'One' } },
    { name: 'all headers of a match are required', path: '/headers', headers: { version: 'two' } },
    { name: 'two headers both present', path: '/headers', headers: { version: 'two', color: 'blue' }, server: 'version-two-blue' },
    { name: 'no header at all', path: '/headers' },
    { name: 'header regex matches', path: '/regex', headers: { 'x-id': '12345' }, server: 'numeric-id' },
    { name: 'header regex does not match', path: '/regex', headers: { 'x-id': 'abc' } },
    { name: 'query exact', path: '/query?animal=whale', server: 'whale' },
    { name: 'query with other params', path: '/query?color=blue&animal=whale', server: 'whale' },
    { name: 'query different value', path: '/query?animal=dolphin' },
    { name: 'method POST', path: '/method', method: 'POST', server: 'post' },
    { name: 'method GET does not match POST', path: '/method', method: 'GET' },
    { name: 'OR: first match (header)', path: '/or', headers: { env: 'canary' }, server: 'either' },
    { name: 'OR: second match (query)', path: '/or?env=canary', server: 'either' },
    { name: 'OR: neither', path: '/or?env=stable', headers: { env: 'stable' } },
  ];
  for (const c of cases) {
    it(`${c.name} → ${c.server ?? '404'}`, async () => {
      const res = await gw.request(80, { path: c.path, method: c.method ?? 'GET', headers: c.headers ?? {}, host: 'match.example' });
      if (c.server === undefined) return assert.equal(res.status, 404);
      assert.equal(res.status, 200);
      assert.equal(res.echo().server, c.server);
    });
  }
});
