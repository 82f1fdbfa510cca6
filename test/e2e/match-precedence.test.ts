/**
 * The Gateway API's precedence when several matches fit one request: Exact path, then
 * RegularExpression (Envoy Gateway's place for it), then longest prefix, then method, then most
 * headers, then most query params; across routes the oldest creationTimestamp, then
 * `namespace/name` alphabetically; within a route the first rule (docs/paths.md).
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startEchoFleet, type EchoFleet } from '../support/fleet.ts';
import { startGateway, type GatewayHarness } from '../support/gateway.ts';
import { gateway, gatewayClass } from '../support/manifests.ts';

function route(name: string, created: string, rules: string): string {
  return `
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: { name: ${name}, namespace: default, creationTimestamp: '${created}' }
spec:
  parentRefs: [{ name: gw }]
  rules:${rules}`;
}

function rule(match: string, backend: string): string {
  return `
    - matches: [${match}]
      backendRefs: [{ name: ${backend}, port: 8080 }]`;
}

describe('match precedence', () => {
  let fleet: EchoFleet;
  let gw: GatewayHarness;

  before(async () => {
    fleet = await startEchoFleet([
      'two-headers', 'one-header', 'method', 'header', 'query-two', 'first-rule', 'second-rule', 'older', 'newer', 'alpha-a', 'alpha-b', 'catch-all', 'regex',
    ]);
    gw = await startGateway(gatewayClass() + fleet.yaml + gateway('gw', [{ name: 'http', port: 80 }]) +
      route('precedence', '2023-01-01T00:00:00Z',
        // listed less specific first, so only precedence (not rule order) can pick the specific one
        rule('{ path: { type: Exact, value: /count }, headers: [{ name: a, value: "1" }] }', 'one-header') +
        rule('{ path: { type: Exact, value: /count }, headers: [{ name: a, value: "1" }, { name: b, value: "2" }] }', 'two-headers') +
        rule('{ path: { type: Exact, value: /method }, headers: [{ name: a, value: "1" }, { name: b, value: "2" }] }', 'header') +
        rule('{ path: { type: Exact, value: /method }, method: POST }', 'method') +
        rule('{ path: { type: Exact, value: /kind }, queryParams: [{ name: q, value: "1" }, { name: r, value: "2" }] }', 'query-two') +
        rule('{ path: { type: Exact, value: /kind }, headers: [{ name: a, value: "1" }] }', 'header') +
        rule('{ path: { type: Exact, value: /rule-order } }', 'first-rule') +
        rule('{ path: { type: Exact, value: /rule-order } }', 'second-rule')) +
      route('newer', '2024-06-01T00:00:00Z', rule('{ path: { type: Exact, value: /age } }', 'newer')) +
      route('older', '2020-06-01T00:00:00Z', rule('{ path: { type: Exact, value: /age } }', 'older')) +
      // The catch-all is the older route and listed first: only the path type can pick the regex.
      route('catch-all', '2019-01-01T00:00:00Z', rule('{ path: { type: PathPrefix, value: / } }', 'catch-all')) +
      route('regex', '2024-01-01T00:00:00Z', rule('{ path: { type: RegularExpression, value: "/items/[0-9]+" } }', 'regex')) +
      route('bbb', '2022-01-01T00:00:00Z', rule('{ path: { type: Exact, value: /alpha } }', 'alpha-b')) +
      route('aaa', '2022-01-01T00:00:00Z', rule('{ path: { type: Exact, value: /alpha } }', 'alpha-a')));
  });
  after(async () => {
    await gw?.close();
    await fleet?.close();
  });

  const cases: { name: string; path: string; method?: string; headers?: Record<string, string>; server: string }[] = [
    { name: 'more header matches win over rule order', path: '/count', headers: { a: '1', b: '2' }, server: 'two-headers' },
    { name: 'fewer headers still match alone', path: '/count', headers: { a: '1' }, server: 'one-header' },
    { name: 'a method match beats header matches', path: '/method', method: 'POST', headers: { a: '1', b: '2' }, server: 'method' },
    { name: 'header matches beat query matches', path: '/kind?q=1&r=2', headers: { a: '1' }, server: 'header' },
    { name: 'first rule wins a full tie within a route', path: '/rule-order', server: 'first-rule' },
    { name: 'the oldest route wins a tie across routes', path: '/age', server: 'older' },
    { name: 'alphabetical namespace/name breaks a timestamp tie', path: '/alpha', server: 'alpha-a' },
    { name: 'a RegularExpression match beats the catch-all PathPrefix /', path: '/items/42', server: 'regex' },
    { name: 'the catch-all still serves what the regex does not match', path: '/items/x', server: 'catch-all' },
  ];
  for (const c of cases) {
    it(`${c.name} → ${c.server}`, async () => {
      const res = await gw.request(80, { path: c.path, method: c.method ?? 'GET', headers: c.headers ?? {}, host: 'precedence.example' });
      assert.equal(res.status, 200);
      assert.equal(res.echo().server, c.server);
    });
  }
});
