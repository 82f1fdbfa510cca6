import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { KubeObject } from '../../api/gateway/object.ts';
import { translate } from './index.ts';

const gw = 'gateway.networking.k8s.io/v1';
const ourClass: KubeObject = { apiVersion: gw, kind: 'GatewayClass', metadata: { name: 'sb' }, spec: { controllerName: 'example.com/ctl' } };

describe('translate', () => {
  it('turns malformed objects into statuses instead of throwing', () => {
    const objects = [
      ourClass,
      { apiVersion: gw, kind: 'Gateway', metadata: { name: 'a' }, spec: { gatewayClassName: 'sb', listeners: 5 } },
      { apiVersion: gw, kind: 'Gateway', metadata: { name: 'b' }, spec: { gatewayClassName: 'sb', listeners: [null, { name: 'x', port: 'eighty', protocol: 'HTTP', tls: 'no' }, { name: 'y', port: 443, protocol: 'HTTPS', tls: { certificateRefs: 'nope' } }] } },
      { apiVersion: gw, kind: 'HTTPRoute', metadata: { name: 'r' }, spec: { parentRefs: [{ name: 'b' }, 'x'], hostnames: [3], rules: [null, { matches: 'x', filters: [{ type: 'RequestMirror' }, { type: 'URLRewrite', urlRewrite: { path: 'x' } }], backendRefs: [{}] }] } },
      { apiVersion: gw, kind: 'ListenerSet', metadata: { name: 'ls' }, spec: { parentRef: 'b' } },
      { apiVersion: 'v1', kind: 'Secret', metadata: { name: 's' }, type: 'kubernetes.io/tls', data: { 'tls.crt': '!!', 'tls.key': '' } },
      { apiVersion: 'v1', kind: 'Service', metadata: { name: 'svc' }, spec: { ports: 'all' } },
      { apiVersion: 'switchboard.dev/v1alpha1', kind: 'ProxyBackend', metadata: { name: 'p' }, spec: null },
      { apiVersion: 'v1', kind: 'Service', metadata: {} },
      null,
    ] as unknown as KubeObject[];
    const result = translate(objects, { controllerName: 'example.com/ctl' });
    assert.equal(result.config.binds.length, 0);
    assert.deepEqual(result.statuses.map((s) => `${s.kind}/${s.metadata.name}`), ['Gateway/a', 'Gateway/b', 'GatewayClass/sb', 'HTTPRoute/r', 'ProxyBackend/p']);
  });

  it('versions equal configs equally and different configs differently', () => {
    const gateway = (port: number): KubeObject => ({ apiVersion: gw, kind: 'Gateway', metadata: { name: 'g' }, spec: { gatewayClassName: 'sb', listeners: [{ name: 'h', port, protocol: 'HTTP' }] } });
    const opts = { controllerName: 'example.com/ctl' };
    const a = translate([ourClass, gateway(80)], opts).config.version;
    assert.equal(translate([gateway(80), ourClass], opts).config.version, a);
    assert.notEqual(translate([ourClass, gateway(81)], opts).config.version, a);
    assert.match(a, /^[0-9a-f]{16}$/);
  });

  it('writes the routes record in key order (UTF-16 code units) whatever the routes\' age order', () => {
    const gateway: KubeObject = { apiVersion: gw, kind: 'Gateway', metadata: { name: 'g', namespace: 'ns' }, spec: { gatewayClassName: 'sb', listeners: [{ name: 'h', port: 80, protocol: 'HTTP' }] } };
    // Oldest first: the translator walks routes in age order, which is not the keys' order here.
    const names = ['r2', 'r10', 'b', 'a-z', 'a', 'z9', 'r1'];
    const routes: KubeObject[] = names.map((name, i) => ({ apiVersion: gw, kind: 'HTTPRoute', metadata: { name, namespace: 'ns', creationTimestamp: new Date(Date.UTC(2026, 0, 1, 0, 0, i)).toISOString() }, spec: { parentRefs: [{ name: 'g' }], rules: [{ matches: [{ path: { type: 'PathPrefix', value: `/${name}` } }] }] } }));
    const keys = Object.keys(translate([ourClass, gateway, ...routes], { controllerName: 'example.com/ctl' }).config.routes);
    assert.equal(keys.length, names.length);
    assert.deepEqual(keys, [...keys].sort((x, y) => (x < y ? -1 : x > y ? 1 : 0)));
  });

  it('defaults the controller name to switchboard.dev/gateway-controller', () => {
    const ours: KubeObject = { ...ourClass, spec: { controllerName: 'switchboard.dev/gateway-controller' } };
    assert.equal(translate([ours]).statuses.length, 1);
    assert.equal(translate([ourClass]).statuses.length, 0);
  });
});
