import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { meshDefaults, parseImage, provisionContext } from './context.ts';

describe('parseImage', () => {
  const rows = [
    { name: 'registry with a dot', ref: 'ghcr.io/org/proxy:1.2', want: { registry: 'ghcr.io', repository: 'org/proxy', tag: '1.2' } },
    { name: 'registry with a port', ref: 'localhost:5000/proxy', want: { registry: 'localhost:5000', repository: 'proxy', tag: undefined } },
    { name: 'no registry', ref: 'switchboard:2.0', want: { registry: '', repository: 'switchboard', tag: '2.0' } },
    { name: 'a path without registry', ref: 'org/proxy:3', want: { registry: '', repository: 'org/proxy', tag: '3' } },
  ];
  for (const row of rows) it(row.name, () => assert.deepEqual(parseImage(row.ref), row.want));
});

describe('provisionContext', () => {
  const facts = { xdsMode: 'tls' as const, xdsPort: 9978, namespace: 'switchboard-system' };
  it('defaults: the controller Service over https, the package version', () => {
    const context = provisionContext(facts, {});
    assert.equal(context.controllerUrl, 'https://switchboard.switchboard-system.svc:9978');
    assert.match(context.defaultTag, /^\d+\.\d+\.\d+/);
    assert.equal(context.caSecret, undefined);
  });
  it('plaintext is http; the chart\'s variables win', () => {
    assert.equal(provisionContext({ ...facts, xdsMode: 'plaintext' }, { SWITCHBOARD_SERVICE_NAME: 'sb' }).controllerUrl, 'http://sb.switchboard-system.svc:9978');
    const context = provisionContext(facts, { SWITCHBOARD_PROXY_IMAGE: 'r.example/p:9', SWITCHBOARD_PROXY_IMAGE_TAG: '10', SWITCHBOARD_XDS_CA_SECRET: 'xds-tls' });
    assert.deepEqual([context.defaultImage, context.defaultTag, context.caSecret], [{ registry: 'r.example', repository: 'p' }, '10', { namespace: 'switchboard-system', name: 'xds-tls' }]);
  });
  it('no CA over plaintext', () => assert.equal(provisionContext({ ...facts, xdsMode: 'plaintext' }, { SWITCHBOARD_XDS_CA_SECRET: 'x' }).caSecret, undefined));
});

describe('meshDefaults (the chart\'s istio.* and gatewayClassName)', () => {
  const rows: ReadonlyArray<{ name: string; env: NodeJS.ProcessEnv; want: object }> = [
    { name: 'nothing set: istiod in istio-system, the chart\'s default class, off', env: {}, want: { autoEnabled: false, gatewayClassName: 'switchboard', caAddress: 'https://istiod.istio-system.svc:15012' } },
    {
      name: 'namespace and revision name the istiod Service',
      env: { SWITCHBOARD_ISTIO_NAMESPACE: 'mesh', SWITCHBOARD_ISTIO_REVISION: '1-24', SWITCHBOARD_ISTIO_AUTO_ENABLED: 'true', SWITCHBOARD_GATEWAY_CLASS_NAME: 'ai' },
      want: { autoEnabled: true, gatewayClassName: 'ai', caAddress: 'https://istiod-1-24.mesh.svc:15012' },
    },
    {
      name: 'an explicit CA address, cluster id and network',
      env: { SWITCHBOARD_ISTIO_CA_ADDRESS: 'https://ca.example:15012', SWITCHBOARD_ISTIO_CLUSTER_ID: 'c1', SWITCHBOARD_ISTIO_NETWORK: 'n1', SWITCHBOARD_ISTIO_AUTO_ENABLED: 'false' },
      want: { autoEnabled: false, gatewayClassName: 'switchboard', caAddress: 'https://ca.example:15012', clusterId: 'c1', network: 'n1' },
    },
  ];
  for (const row of rows) it(row.name, () => assert.deepEqual(meshDefaults(row.env), row.want));
  it('SWITCHBOARD_INFERENCE_EXTENSION_ENABLED is read', () => {
    const facts = { xdsMode: 'tls' as const, xdsPort: 9978, namespace: 'n' };
    assert.equal(provisionContext(facts, { SWITCHBOARD_INFERENCE_EXTENSION_ENABLED: 'true' }).inferenceExtension, true);
    assert.equal(provisionContext(facts, { SWITCHBOARD_INFERENCE_EXTENSION_ENABLED: 'false' }).inferenceExtension, undefined);
  });
});

