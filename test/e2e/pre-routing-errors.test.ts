/**
 * Answers made before a route is chosen (docs/errors.md "Which format a client gets"): no route,
 * and PreRouting refusals — authentication, rate limit, an invalid PreRouting policy — are
 * rendered by the one error renderer in the gateway's JSON with a documented code, even on a
 * listener whose routes lead to an MCP backend (no backend, so no client format, is known yet).
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startGateway, type GatewayHarness } from '../support/gateway.ts';
import { gateway, gatewayClass } from '../support/manifests.ts';

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

/** The gateway's JSON error body, checked for its exact shape. */
function gatewayError(text: string): { code: string; message: string } {
  const body = JSON.parse(text) as { error: { code: string; message: string } };
  assert.deepEqual(Object.keys(body), ['error']);
  assert.deepEqual(Object.keys(body.error).sort(), ['code', 'message']);
  return body.error;
}

describe('answers before routing are in the gateway JSON with a documented code', () => {
  let gw: GatewayHarness;

  before(async () => {
    gw = await startGateway(
      gatewayClass() + gateway('gw', [{ name: 'open', port: 80 }, { name: 'keyed', port: 81 }, { name: 'limited', port: 82 }, { name: 'broken', port: 83 }]) + `
---
apiVersion: switchboard.dev/v1alpha1
kind: ProxyBackend
metadata: { name: tools, namespace: default }
spec:
  mcp:
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
---
apiVersion: v1
kind: Secret
metadata: { name: keys, namespace: default }
stringData: { alice: sk-alice }
` +
      preRouting('keyed', 'keyed', 'apiKeyAuthentication: { secretRef: { name: keys } }') +
      preRouting('limited', 'limited', 'rateLimit: { local: [{ requests: 1, unit: Hours }] }') +
      preRouting('broken', 'broken', 'apiKeyAuthentication: { secretRef: { name: no-such-secret } }'),
    );
  });
  after(async () => {
    await gw?.close();
  });

  const mcpCall = { path: '/mcp', method: 'POST', headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' }, body: '{"jsonrpc":"2.0","id":1,"method":"ping"}' };

  it('no route: 404 route_not_found', async () => {
    const r = await gw.request(80, { path: '/nowhere' });
    assert.equal(r.status, 404);
    assert.match(String(r.headers['content-type']), /application\/json/);
    assert.equal(gatewayError(r.text).code, 'route_not_found');
  });

  it('PreRouting authentication: 401 unauthorized with its challenge, not a JSON-RPC error, on an MCP path', async () => {
    const r = await gw.request(81, mcpCall);
    assert.equal(r.status, 401);
    assert.equal(gatewayError(r.text).code, 'unauthorized');
    assert.ok(r.headers['www-authenticate'], 'challenge kept');
  });

  it('PreRouting rate limit: 429 rate_limited with Retry-After', async () => {
    await gw.request(82, { path: '/nowhere' });
    const r = await gw.request(82, mcpCall);
    assert.equal(r.status, 429);
    assert.equal(gatewayError(r.text).code, 'rate_limited');
    assert.ok(r.headers['retry-after'], 'Retry-After kept');
  });

  it('an invalid PreRouting policy: 500 policy_invalid, nothing routed', async () => {
    const r = await gw.request(83, mcpCall);
    assert.equal(r.status, 500);
    assert.equal(gatewayError(r.text).code, 'policy_invalid');
  });
});
