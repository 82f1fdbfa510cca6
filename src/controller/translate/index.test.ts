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

  it('defaults the controller name to switchboard.dev/gateway-controller', () => {
    const ours: KubeObject = { ...ourClass, spec: { controllerName: 'switchboard.dev/gateway-controller' } };
    assert.equal(translate([ours]).statuses.length, 1);
    assert.equal(translate([ourClass]).statuses.length, 0);
  });
});
