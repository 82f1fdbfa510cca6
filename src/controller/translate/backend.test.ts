import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { KubeObject } from '../../api/gateway/object.ts';
import { translate } from './index.ts';
import { IncrementalTranslator } from './incremental.ts';

const gw = 'gateway.networking.k8s.io/v1';
const opts = { controllerName: 'example.com/ctl' };
const base: KubeObject[] = [
  { apiVersion: gw, kind: 'GatewayClass', metadata: { name: 'sb' }, spec: { controllerName: 'example.com/ctl' } },
  { apiVersion: gw, kind: 'Gateway', metadata: { name: 'g', namespace: 'ns' }, spec: { gatewayClassName: 'sb', listeners: [{ name: 'h', port: 80, protocol: 'HTTP' }] } },
];
const service: KubeObject = { apiVersion: 'v1', kind: 'Service', metadata: { name: 'svc', namespace: 'ns' }, spec: { ports: [{ name: 'http', port: 8080 }, { name: 'admin', port: 9090 }] } };
const slice = (address: string): KubeObject => ({
  apiVersion: 'discovery.k8s.io/v1', kind: 'EndpointSlice', metadata: { name: 'svc-1', namespace: 'ns', labels: { 'kubernetes.io/service-name': 'svc' } },
  ports: [{ name: 'http', port: 1080 }, { name: 'admin', port: 1090 }], endpoints: [{ addresses: [address] }],
});
const route = (name: string, port: number): KubeObject => ({ apiVersion: gw, kind: 'HTTPRoute', metadata: { name, namespace: 'ns' }, spec: { parentRefs: [{ name: 'g' }], rules: [{ matches: [{ path: { type: 'PathPrefix', value: `/${name}` } }], backendRefs: [{ name: 'svc', port }] }] } });

describe('Service backends: one object per Service, port and slice list', () => {
  it('routes naming the same Service port share its Backend; another port has its own', () => {
    const { config } = translate([...base, service, slice('10.0.0.1'), route('a', 8080), route('b', 8080), route('c', 9090)], opts);
    assert.deepEqual(Object.keys(config.backends).sort(), ['service/ns/svc:8080', 'service/ns/svc:9090']);
    assert.deepEqual(config.backends['service/ns/svc:8080']?.endpoints, [{ host: '10.0.0.1', port: 1080 }]);
    assert.deepEqual(config.backends['service/ns/svc:9090']?.endpoints, [{ host: '10.0.0.1', port: 1090 }]);
  });

  // The same Service object with another EndpointSlice (a watch event on the slice alone): the kept Backend must not be reused.
  it('a changed EndpointSlice of the same Service object gives new endpoints (translate and incremental)', () => {
    const incremental = new IncrementalTranslator(opts);
    for (const address of ['10.0.0.1', '10.0.0.2', '10.0.0.3']) {
      const objects = [...base, service, slice(address), route('a', 8080)];
      const want = [{ host: address, port: 1080 }];
      assert.deepEqual(translate(objects, opts).config.backends['service/ns/svc:8080']?.endpoints, want);
      assert.deepEqual(incremental.replace(objects).config.backends['service/ns/svc:8080']?.endpoints, want);
    }
  });

  it('no slice at all, then one: no endpoints, then its endpoints', () => {
    assert.deepEqual(translate([...base, service, route('a', 8080)], opts).config.backends['service/ns/svc:8080']?.endpoints, []);
    assert.deepEqual(translate([...base, service, slice('10.0.0.9'), route('a', 8080)], opts).config.backends['service/ns/svc:8080']?.endpoints, [{ host: '10.0.0.9', port: 1080 }]);
  });
});
