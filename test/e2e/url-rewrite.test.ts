/** URLRewrite: hostname, full path and prefix replacement, seen from the backend. */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startEchoServer, type EchoServer } from '../support/echo-server.ts';
import { startGateway, type GatewayHarness } from '../support/gateway.ts';
import { gateway, gatewayClass, service } from '../support/manifests.ts';

function rewriteRule(prefix: string, rewrite: string): string {
  return `
    - matches: [{ path: { type: PathPrefix, value: ${prefix} } }]
      filters: [{ type: URLRewrite, urlRewrite: ${rewrite} }]
      backendRefs: [{ name: echo, port: 8080 }]`;
}

describe('URL rewrites', () => {
  let echo: EchoServer;
  let gw: GatewayHarness;

  before(async () => {
    echo = await startEchoServer('echo');
    gw = await startGateway(gatewayClass() + service('echo', echo) + gateway('gw', [{ name: 'http', port: 80 }]) + `
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: { name: rewrites, namespace: default }
spec:
  parentRefs: [{ name: gw }]
  rules:` +
      rewriteRule('/hostname', '{ hostname: rewritten.example.com }') +
      rewriteRule('/full', '{ path: { type: ReplaceFullPath, replaceFullPath: /one } }') +
      rewriteRule('/prefix/one', '{ path: { type: ReplacePrefixMatch, replacePrefixMatch: /one } }') +
      rewriteRule('/strip-prefix', '{ path: { type: ReplacePrefixMatch, replacePrefixMatch: / } }') +
      rewriteRule('/both', '{ hostname: both.example.com, path: { type: ReplacePrefixMatch, replacePrefixMatch: /inner } }'));
  });
  after(async () => {
    await gw?.close();
    await echo?.close();
  });

  const cases: { name: string; path: string; seenPath: string; seenHost?: string; seenQuery?: Record<string, string> }[] = [
    { name: 'hostname rewritten, path kept', path: '/hostname/x', seenPath: '/hostname/x', seenHost: 'rewritten.example.com' },
    { name: 'full path replaced', path: '/full/anything/here', seenPath: '/one' },
    { name: 'prefix replaced, rest kept', path: '/prefix/one/two', seenPath: '/one/two' },
    { name: 'bare prefix replaced', path: '/prefix/one', seenPath: '/one' },
    { name: 'prefix with trailing slash replaced', path: '/prefix/one/', seenPath: '/one/' },
    { name: 'prefix stripped to /', path: '/strip-prefix/three', seenPath: '/three' },
    { name: 'bare prefix stripped to /', path: '/strip-prefix', seenPath: '/' },
    { name: 'query string survives a prefix rewrite', path: '/prefix/one/two?a=1', seenPath: '/one/two', seenQuery: { a: '1' } },
    { name: 'hostname and path together', path: '/both/x', seenPath: '/inner/x', seenHost: 'both.example.com' },
  ];
  for (const c of cases) {
    it(c.name, async () => {
      const res = await gw.request(80, { path: c.path, host: 'client.example.com' });
      assert.equal(res.status, 200);
      const seen = res.echo();
      assert.equal(seen.path, c.seenPath);
      assert.equal(seen.host, c.seenHost ?? 'client.example.com');
      if (c.seenQuery) assert.deepEqual(seen.query, c.seenQuery);
    });
  }
});
