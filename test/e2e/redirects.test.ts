/**
 * RequestRedirect: scheme, hostname, port, path (full and prefix) and status code. The port in
 * Location follows the Gateway API: the scheme's well-known port when the scheme changes, else the
 * listener's port, and it is left out when it is the default for the scheme.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startGateway, type GatewayHarness } from '../support/gateway.ts';
import { gateway, gatewayClass } from '../support/manifests.ts';

function redirectRule(type: 'Exact' | 'PathPrefix', path: string, redirect: string): string {
  return `
    - matches: [{ path: { type: ${type}, value: ${path} } }]
      filters: [{ type: RequestRedirect, requestRedirect: ${redirect} }]`;
}

describe('redirects', () => {
  let gw: GatewayHarness;

  before(async () => {
    gw = await startGateway(gatewayClass() + gateway('gw', [{ name: 'http', port: 80 }, { name: 'alt', port: 8080 }]) + `
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: { name: redirects, namespace: default }
spec:
  parentRefs: [{ name: gw }]
  rules:` +
      redirectRule('Exact', '/scheme', '{ scheme: https }') +
      redirectRule('Exact', '/scheme-and-port', '{ scheme: https, port: 8443 }') +
      redirectRule('Exact', '/hostname', '{ hostname: moved.example.com }') +
      redirectRule('Exact', '/port', '{ port: 8081 }') +
      redirectRule('Exact', '/full-path', '{ path: { type: ReplaceFullPath, replaceFullPath: /replaced } }') +
      redirectRule('PathPrefix', '/prefix', '{ path: { type: ReplacePrefixMatch, replacePrefixMatch: /new-prefix } }') +
      redirectRule('Exact', '/permanent', '{ hostname: moved.example.com, statusCode: 301 }') +
      redirectRule('Exact', '/everything', '{ scheme: https, hostname: moved.example.com, port: 9443, path: { type: ReplaceFullPath, replaceFullPath: /all }, statusCode: 308 }'));
  });
  after(async () => {
    await gw?.close();
  });

  const cases: { name: string; port?: number; path: string; status: number; location: string }[] = [
    { name: 'scheme https drops the default port', path: '/scheme', status: 302, location: 'https://example.com/scheme' },
    { name: 'scheme and explicit port', path: '/scheme-and-port', status: 302, location: 'https://example.com:8443/scheme-and-port' },
    { name: 'hostname keeps the default listener port out', path: '/hostname', status: 302, location: 'http://moved.example.com/hostname' },
    { name: 'hostname on a non-default listener port keeps it', port: 8080, path: '/hostname', status: 302, location: 'http://moved.example.com:8080/hostname' },
    { name: 'port only', path: '/port', status: 302, location: 'http://example.com:8081/port' },
    { name: 'full path replaced', path: '/full-path', status: 302, location: 'http://example.com/replaced' },
    { name: 'prefix replaced, rest kept', path: '/prefix/a/b', status: 302, location: 'http://example.com/new-prefix/a/b' },
    { name: 'prefix replaced on the bare prefix', path: '/prefix', status: 302, location: 'http://example.com/new-prefix' },
    { name: 'status code 301', path: '/permanent', status: 301, location: 'http://moved.example.com/permanent' },
    { name: 'everything at once, 308', path: '/everything', status: 308, location: 'https://moved.example.com:9443/all' },
  ];
  for (const c of cases) {
    it(c.name, async () => {
      const res = await gw.request(c.port ?? 80, { path: c.path, host: 'example.com' });
      assert.equal(res.status, c.status);
      assert.equal(res.headers.location, c.location);
    });
  }
});
