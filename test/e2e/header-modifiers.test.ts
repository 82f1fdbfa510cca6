/** RequestHeaderModifier and ResponseHeaderModifier, on a rule and on a backendRef. */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startEchoServer, type EchoServer } from '../support/echo-server.ts';
import { startGateway, type GatewayHarness } from '../support/gateway.ts';
import { gateway, gatewayClass, service } from '../support/manifests.ts';

describe('header modifiers', () => {
  let echo: EchoServer;
  let gw: GatewayHarness;

  before(async () => {
    echo = await startEchoServer('echo');
    gw = await startGateway(gatewayClass() + service('echo', echo) + gateway('gw', [{ name: 'http', port: 80 }]) + `
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: { name: modifiers, namespace: default }
spec:
  parentRefs: [{ name: gw }]
  rules:
    - matches: [{ path: { type: PathPrefix, value: /request } }]
      filters:
        - type: RequestHeaderModifier
          requestHeaderModifier:
            set: [{ name: X-Set, value: set-by-gateway }]
            add: [{ name: X-Add, value: added }]
            remove: [X-Remove]
      backendRefs: [{ name: echo, port: 8080 }]
    - matches: [{ path: { type: PathPrefix, value: /response } }]
      filters:
        - type: ResponseHeaderModifier
          responseHeaderModifier:
            set: [{ name: X-Set, value: set-by-gateway }]
            add: [{ name: X-Add, value: added }]
            remove: [X-Remove]
      backendRefs: [{ name: echo, port: 8080 }]
    - matches: [{ path: { type: PathPrefix, value: /backend } }]
      backendRefs:
        - name: echo
          port: 8080
          filters:
            - type: RequestHeaderModifier
              requestHeaderModifier: { set: [{ name: X-Backend, value: from-backend-ref }] }
`);
  });
  after(async () => {
    await gw?.close();
    await echo?.close();
  });

  it('sets, adds and removes request headers', async () => {
    const res = await gw.request(80, {
      path: '/request',
      headers: { 'x-set': 'from-client', 'x-add': 'from-client', 'x-remove': 'gone', 'x-keep': 'kept' },
    });
    assert.equal(res.status, 200);
    const headers = res.echo().headers;
    assert.equal(headers['x-set'], 'set-by-gateway');
    assert.deepEqual(String(headers['x-add']).split(/,\s*/), ['from-client', 'added']);
    assert.equal(headers['x-remove'], undefined);
    assert.equal(headers['x-keep'], 'kept');
  });

  it('adds a request header the client did not send', async () => {
    const res = await gw.request(80, { path: '/request' });
    assert.equal(res.echo().headers['x-add'], 'added');
    assert.equal(res.echo().headers['x-set'], 'set-by-gateway');
  });

  it('sets, adds and removes response headers', async () => {
    const res = await gw.request(80, { path: '/response?respHeader=x-set:from-upstream&respHeader=x-add:from-upstream&respHeader=x-remove:gone' });
    assert.equal(res.status, 200);
    assert.equal(res.headers['x-set'], 'set-by-gateway');
    assert.deepEqual(String(res.headers['x-add']).split(/,\s*/), ['from-upstream', 'added']);
    assert.equal(res.headers['x-remove'], undefined);
    assert.equal(res.headers['x-echo-server'], 'echo', 'other upstream headers pass through');
  });

  it('applies a backendRef filter to requests sent to that backend', async () => {
    const res = await gw.request(80, { path: '/backend' });
    assert.equal(res.echo().headers['x-backend'], 'from-backend-ref');
  });
});
