/**
 * MCP OAuth discovery inside the one request lifecycle (issue 12 item 2): the well-known answers
 * are routed to the MCP route of their resource after PreRouting, so a PreRouting deny or rate
 * limit refuses them, PreRouting response effects reach them, and the MCP route's CORS answers
 * their preflight and decorates them, as it does for the route's own 401 challenge.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { jwks, testSigner } from '../../src/proxy/policies/traffic/jwt-authentication/test-keys.ts';
import { startGateway, type GatewayHarness } from '../support/gateway.ts';
import { gateway, gatewayClass, routeTrafficPolicy } from '../support/manifests.ts';

const ISSUER = 'https://idp.example/realms/demo';
const ORIGIN = 'https://app.example.com';
const DOCUMENT = '/.well-known/oauth-protected-resource/mcp';

/** A ProxyPolicy with phase PreRouting on listener `sectionName` of Gateway `gw`. */
function preRouting(name: string, sectionName: string, traffic: string): string {
  return `
---
apiVersion: switchboard.dev/v1alpha1
kind: ProxyPolicy
metadata: { name: ${name}, namespace: default }
spec:
  targetRefs: [{ group: gateway.networking.k8s.io, kind: Gateway, name: gw, sectionName: ${sectionName} }]
  traffic:
    phase: PreRouting
${traffic.replace(/^/gm, '    ')}
`;
}

describe('MCP OAuth discovery in the request lifecycle', () => {
  let gw: GatewayHarness;

  before(async () => {
    const keys = jwks(await testSigner('RS256', 'idp-key'));
    gw = await startGateway(
      gatewayClass() + gateway('gw', [{ name: 'pre', port: 80 }, { name: 'limited', port: 81 }]) + `
---
apiVersion: switchboard.dev/v1alpha1
kind: ProxyBackend
metadata: { name: tools, namespace: default }
spec:
  mcp:
    # Never contacted: discovery is answered by the gateway.
    targets: [{ name: tools, static: { host: 127.0.0.1, port: 9 } }]
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: { name: mcp, namespace: default }
spec:
  parentRefs: [{ name: gw }]
  rules:
    - matches: [{ path: { type: PathPrefix, value: /mcp } }]
      backendRefs: [{ group: switchboard.dev, kind: ProxyBackend, name: tools }]
` +
      routeTrafficPolicy('mcp', 'mcp', `cors: { allowOrigins: ["${ORIGIN}"], allowMethods: [GET, POST], allowHeaders: [mcp-protocol-version] }
jwtAuthentication:
  providers: [{ issuer: ${JSON.stringify(ISSUER)}, jwks: { inline: ${JSON.stringify(keys)} } }]
  mcp: { resourceMetadata: { scopes_supported: [mcp] } }`) +
      preRouting('pre', 'pre', `authorization: { action: Deny, policy: { matchExpressions: ['"x-blocked" in request.headers'] } }
headerModifiers: { response: { set: [{ name: x-pre-routing, value: applied }] } }`) +
      preRouting('limited', 'limited', 'rateLimit: { local: [{ requests: 1, unit: Hours }] }'),
    );
    assert.deepEqual(gw.applyErrors, []);
  });
  after(async () => {
    await gw?.close();
  });

  it('answers the protected-resource document with PreRouting response effects and the route CORS headers', async () => {
    const r = await gw.request(80, { path: DOCUMENT, host: 'tools.example', headers: { origin: ORIGIN } });
    assert.equal(r.status, 200, r.text);
    const doc = JSON.parse(r.text) as Record<string, unknown>;
    assert.equal(doc.resource, 'http://tools.example/mcp');
    assert.deepEqual(doc.authorization_servers, [ISSUER]);
    assert.deepEqual(doc.scopes_supported, ['mcp']);
    assert.equal(r.headers['x-pre-routing'], 'applied');
    assert.equal(r.headers['access-control-allow-origin'], ORIGIN);
  });

  it('a PreRouting deny refuses discovery like any request (403 in the gateway JSON)', async () => {
    const r = await gw.request(80, { path: DOCUMENT, host: 'tools.example', headers: { 'x-blocked': '1' } });
    assert.equal(r.status, 403, r.text);
    assert.equal((JSON.parse(r.text) as { error: { code: string } }).error.code, 'forbidden');
  });

  it('the route CORS answers a discovery preflight (not the documents\' wildcard)', async () => {
    const r = await gw.request(80, {
      path: DOCUMENT, method: 'OPTIONS', host: 'tools.example',
      headers: { origin: ORIGIN, 'access-control-request-method': 'GET', 'access-control-request-headers': 'mcp-protocol-version' },
    });
    assert.equal(r.status, 200, r.text);
    assert.equal(r.headers['access-control-allow-origin'], ORIGIN);
    assert.match(String(r.headers['access-control-allow-methods']), /GET/);
  });

  it('the same route answers an MCP request without a token with the challenge naming that document', async () => {
    const r = await gw.request(80, { path: '/mcp', method: 'POST', host: 'tools.example', headers: { origin: ORIGIN, 'content-type': 'application/json' }, body: '{}' });
    assert.equal(r.status, 401);
    assert.match(String(r.headers['www-authenticate']), /resource_metadata="http:\/\/tools\.example\/\.well-known\/oauth-protected-resource\/mcp"/);
    assert.equal(r.headers['access-control-allow-origin'], ORIGIN);
  });

  it('a PreRouting rate limit counts discovery requests (the second within the hour is 429)', async () => {
    const first = await gw.request(81, { path: DOCUMENT, host: 'tools.example' });
    assert.equal(first.status, 200, first.text);
    const second = await gw.request(81, { path: DOCUMENT, host: 'tools.example' });
    assert.equal(second.status, 429, second.text);
    assert.equal((JSON.parse(second.text) as { error: { code: string } }).error.code, 'rate_limited');
  });
});
