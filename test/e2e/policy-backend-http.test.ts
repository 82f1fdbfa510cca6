/** Backend policy http and tcp through YAML: version HTTP2 as h2c on plaintext, requestTimeout, keepalive/connectTimeout accepted. */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { stringify } from 'yaml';
import { startEchoServer, type EchoServer } from '../support/echo-server.ts';
import { startGateway, type GatewayHarness } from '../support/gateway.ts';
import { gateway, gatewayClass, service } from '../support/manifests.ts';

const doc = (o: unknown) => `---\n${stringify(o)}`;
const RULES: Record<string, Record<string, unknown>> = {
  h2c: { http: { version: 'HTTP2' }, tcp: { connectTimeout: '2s', keepalive: { time: '30s' } } },
  h1: { http: { version: 'HTTP1' } },
  deadline: { http: { requestTimeout: '200ms' } },
};

describe('backend policy: http and tcp', () => {
  let echo: EchoServer;
  let gw: GatewayHarness;

  before(async () => {
    echo = await startEchoServer('echo');
    const rules = Object.keys(RULES).map((name) => ({ name, matches: [{ path: { type: 'PathPrefix', value: `/${name}` } }], backendRefs: [{ name: 'echo', port: 8080 }] }));
    gw = await startGateway(gatewayClass() + service('echo', echo) + gateway('gw', [{ name: 'http', port: 80 }])
      + doc({ apiVersion: 'gateway.networking.k8s.io/v1', kind: 'HTTPRoute', metadata: { name: 'r', namespace: 'default' }, spec: { parentRefs: [{ name: 'gw' }], rules } })
      + Object.entries(RULES).map(([rule, backend]) => doc({
        apiVersion: 'switchboard.dev/v1alpha1', kind: 'ProxyPolicy', metadata: { name: rule, namespace: 'default' },
        spec: { targetRefs: [{ group: 'gateway.networking.k8s.io', kind: 'HTTPRoute', name: 'r', sectionName: rule }], backend },
      })).join(''));
    assert.deepEqual(gw.applyErrors, []);
  });
  after(async () => {
    await gw?.close();
    await echo?.close();
  });

  const cases = [
    { name: 'HTTP2 on plaintext speaks h2c to the endpoint', path: '/h2c', status: 200, protocol: 'HTTP/2' },
    { name: 'HTTP1 stays on HTTP/1.1', path: '/h1', status: 200, protocol: 'HTTP/1.1' },
    { name: 'requestTimeout answers 504 when the upstream is slower', path: '/deadline?delay=2000', status: 504 },
    { name: 'requestTimeout lets a fast answer through', path: '/deadline', status: 200, protocol: 'HTTP/1.1' },
  ];
  for (const c of cases) {
    it(c.name, async () => {
      const res = await gw.request(80, { path: c.path });
      assert.equal(res.status, c.status, res.text);
      if (c.protocol) assert.equal(res.echo().protocol, c.protocol);
    });
  }
});
