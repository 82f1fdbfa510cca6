import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { Registry } from 'prom-client';
import { meshSettings, registerMeshInfo } from './proxy-mesh.ts';

const ON = { MESH_ENABLED: 'true', MESH_CA_ADDRESS: 'https://istiod.istio-system.svc:15012', MESH_TRUST_DOMAIN: 'cluster.local', MESH_ADDITIONAL_TRUST_DOMAINS: 'cluster.local,other.local', MESH_CLUSTER_ID: 'c1', MESH_NETWORK: 'n1' };

describe('meshSettings (the MESH_* provisioning sets)', () => {
  it('absent: no mesh settings', () => assert.equal(meshSettings({}), undefined));
  it('disabled', () => assert.equal(meshSettings({ MESH_ENABLED: 'false' })?.enabled, false));
  it('enabled: every field, the local trust domain once', () => {
    assert.deepEqual(meshSettings(ON), { enabled: true, caAddress: ON.MESH_CA_ADDRESS, trustDomain: 'cluster.local', trustDomains: ['cluster.local', 'other.local'], clusterId: 'c1', network: 'n1' });
  });
  it('enabled without additional domains still accepts the local one; cluster id defaults', () => {
    const mesh = meshSettings({ ...ON, MESH_ADDITIONAL_TRUST_DOMAINS: '', MESH_CLUSTER_ID: '' });
    assert.deepEqual([mesh?.trustDomains, mesh?.clusterId], [['cluster.local'], 'Kubernetes']);
  });
  const REFUSED: ReadonlyArray<[string, NodeJS.ProcessEnv, RegExp]> = [
    ['MESH_ENABLED not a boolean', { MESH_ENABLED: 'yes' }, /MESH_ENABLED must be true or false/],
    ['a CA address that is not https', { ...ON, MESH_CA_ADDRESS: 'http://istiod:15010' }, /MESH_CA_ADDRESS must be an https/],
    ['no trust domain', { ...ON, MESH_TRUST_DOMAIN: '' }, /MESH_TRUST_DOMAIN must be a trust domain/],
    ['a bad additional trust domain', { ...ON, MESH_ADDITIONAL_TRUST_DOMAINS: 'ok.local,Not A Domain' }, /"Not A Domain" is not a trust domain/],
    ['too many trust domains', { ...ON, MESH_ADDITIONAL_TRUST_DOMAINS: Array.from({ length: 65 }, (_, i) => `d${i}.local`).join(',') }, /more than 64/],
  ];
  for (const [name, env, error] of REFUSED) it(`refuses ${name}`, () => assert.throws(() => meshSettings(env), error));
});

describe('registerMeshInfo', () => {
  it('exposes the settings as switchboard_proxy_mesh_info', async () => {
    const registry = new Registry();
    registerMeshInfo(registry, meshSettings(ON)!);
    assert.match(await registry.metrics(), /switchboard_proxy_mesh_info\{enabled="true",trust_domain="cluster.local",trust_domains="cluster.local,other.local",cluster_id="c1",network="n1",ca_address="https:\/\/istiod.istio-system.svc:15012"\} 1/);
  });
});
