/**
 * Listener isolation: a request is served only by routes attached to the most specific listener
 * that matches its host on its port, and routes bound by sectionName or port stay on that listener.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startEchoServer, type EchoServer } from '../support/echo-server.ts';
import { startGateway, type GatewayHarness } from '../support/gateway.ts';
import { gateway, gatewayClass, service } from '../support/manifests.ts';

function route(name: string, parentRef: string, path: string): string {
  return `
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: { name: ${name}, namespace: default }
spec:
  parentRefs: [${parentRef}]
  rules:
    - matches: [{ path: { type: PathPrefix, value: ${path} } }]
      backendRefs: [{ name: echo, port: 8080 }]
`;
}

describe('listener isolation', () => {
  let echo: EchoServer;
  let gw: GatewayHarness;

  before(async () => {
    echo = await startEchoServer('echo');
    gw = await startGateway(gatewayClass() + service('echo', echo) + gateway('gw', [
      { name: 'empty-hostname', port: 80 },
      { name: 'wildcard-example-com', port: 80, hostname: '*.example.com' },
      { name: 'wildcard-foo-example-com', port: 80, hostname: '*.foo.example.com' },
      { name: 'abc-foo-example-com', port: 80, hostname: 'abc.foo.example.com' },
      { name: 'other-port', port: 8080 },
    ]) +
      route('empty', '{ name: gw, sectionName: empty-hostname }', '/empty-hostname') +
      route('wildcard', '{ name: gw, sectionName: wildcard-example-com }', '/wildcard-example-com') +
      route('wildcard-foo', '{ name: gw, sectionName: wildcard-foo-example-com }', '/wildcard-foo-example-com') +
      route('abc-foo', '{ name: gw, sectionName: abc-foo-example-com }', '/abc-foo-example-com') +
      route('by-port', '{ name: gw, port: 8080 }', '/by-port'));
  });
  after(async () => {
    await gw?.close();
    await echo?.close();
  });

  const paths = ['/empty-hostname', '/wildcard-example-com', '/wildcard-foo-example-com', '/abc-foo-example-com', '/by-port'];
  const servedBy: Record<string, string> = {
    'bar.com': '/empty-hostname',
    'bar.example.com': '/wildcard-example-com',
    'bar.foo.example.com': '/wildcard-foo-example-com',
    'abc.foo.example.com': '/abc-foo-example-com',
  };
  for (const [host, served] of Object.entries(servedBy)) {
    for (const path of paths) {
      const expected = path === served ? 200 : 404;
      it(`${host}${path} on :80 → ${expected}`, async () => {
        const res = await gw.request(80, { host, path });
        assert.equal(res.status, expected);
      });
    }
  }

  it('serves a route attached by port on that port only', async () => {
    assert.equal((await gw.request(8080, { host: 'bar.com', path: '/by-port' })).status, 200);
    assert.equal((await gw.request(8080, { host: 'bar.com', path: '/empty-hostname' })).status, 404);
  });
});
