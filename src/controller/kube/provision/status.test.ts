import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { KubeObject, ObjectStatus } from '../../../api/gateway/object.ts';
import { overlayProvisionStatus, parametersVerdicts } from './status.ts';

const params = (name: string, spec: Record<string, unknown>): KubeObject => ({ apiVersion: 'switchboard.dev/v1alpha1', kind: 'ProxyParameters', metadata: { name, namespace: 'apps' }, spec } as KubeObject);
const configMap: KubeObject = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'models', namespace: 'apps' } } as KubeObject;

describe('parametersVerdicts', () => {
  const rows: ReadonlyArray<{ name: string; object: KubeObject; want: [string, string, string][] }> = [
    { name: 'valid, no refs', object: params('p', { logging: { level: 'info' } }), want: [['Accepted', 'True', 'Accepted'], ['ResolvedRefs', 'True', 'ResolvedRefs']] },
    { name: 'invalid shutdown', object: params('p', { shutdown: { min: 9, max: 1 } }), want: [['Accepted', 'False', 'Invalid'], ['ResolvedRefs', 'True', 'ResolvedRefs']] },
    { name: 'catalog ConfigMap present (the translator reads the catalog, issue 18)', object: params('p', { modelCatalog: { sources: [{ configMap: { name: 'models' } }] } }), want: [['Accepted', 'True', 'Accepted'], ['ResolvedRefs', 'True', 'ResolvedRefs']] },
    { name: 'catalog ConfigMap missing', object: params('p', { modelCatalog: { sources: [{ configMap: { name: 'nope' } }] } }), want: [['Accepted', 'True', 'Accepted'], ['ResolvedRefs', 'False', 'RefNotFound']] },
    { name: 'rawConfig runtime settings are applied', object: params('p', { rawConfig: { bindAddress: '::', logging: { format: 'json' } } }), want: [['Accepted', 'True', 'Accepted'], ['ResolvedRefs', 'True', 'ResolvedRefs']] },
    { name: 'rawConfig with an unknown key is invalid', object: params('p', { rawConfig: { a: 1 } }), want: [['Accepted', 'False', 'Invalid'], ['ResolvedRefs', 'True', 'ResolvedRefs']] },
    { name: 'per-module log levels are applied', object: params('p', { logging: { level: 'info,mcp=debug' } }), want: [['Accepted', 'True', 'Accepted'], ['ResolvedRefs', 'True', 'ResolvedRefs']] },
    { name: 'a log filter naming an unknown module is invalid', object: params('p', { logging: { level: 'info,mpc=debug' } }), want: [['Accepted', 'False', 'Invalid'], ['ResolvedRefs', 'True', 'ResolvedRefs']] },
    { name: 'mesh enabled has no integration', object: params('p', { mesh: { enabled: true } }), want: [['Accepted', 'False', 'PartiallyApplied'], ['ResolvedRefs', 'True', 'ResolvedRefs']] },
    { name: 'mesh disabled is fully applied', object: params('p', { mesh: { enabled: false }, shutdown: { min: 1, max: 2 }, env: [{ name: 'A', value: 'b' }] }), want: [['Accepted', 'True', 'Accepted'], ['ResolvedRefs', 'True', 'ResolvedRefs']] },
  ];
  for (const row of rows) {
    it(row.name, () => {
      const verdict = parametersVerdicts([row.object, configMap]).get('apps/p')!;
      assert.deepEqual(verdict.map((c) => [c.type, c.status, c.reason]), row.want);
    });
  }
});

it('an invalid rawConfig is named by its path in the Accepted message', () => {
  const [accepted] = parametersVerdicts([params('p', { rawConfig: { bindAddress: 'x y', extra: true } })]).get('apps/p')!;
  assert.match(accepted!.message, /spec\.rawConfig\.extra: unknown key \(allowed: logging, shutdown, bindAddress, serverName\)/);
  assert.match(accepted!.message, /spec\.rawConfig\.bindAddress: must be an IP address or a host name/);
});

describe('overlayProvisionStatus', () => {
  const translated: ObjectStatus[] = [
    { apiVersion: 'switchboard.dev/v1alpha1', kind: 'ProxyParameters', metadata: { name: 'p', namespace: 'apps' }, status: { conditions: [{ type: 'Accepted', status: 'False', reason: 'Unsupported', message: 'embedded', observedGeneration: 4 }] } },
    { apiVersion: 'gateway.networking.k8s.io/v1', kind: 'Gateway', metadata: { name: 'gw', namespace: 'apps' }, status: { conditions: [{ type: 'Accepted', status: 'True', reason: 'Accepted', message: 'ok', observedGeneration: 2 }, { type: 'Programmed', status: 'True', reason: 'Programmed', message: 'ok' }] } },
    { apiVersion: 'gateway.networking.k8s.io/v1', kind: 'Gateway', metadata: { name: 'fine', namespace: 'apps' }, status: { conditions: [{ type: 'Accepted', status: 'True', reason: 'Accepted', message: 'ok' }] } },
  ];
  const out = overlayProvisionStatus(translated, {
    parameters: new Map([['apps/p', [{ type: 'Accepted', status: 'True', reason: 'Accepted', message: 'm' }]]]),
    gateways: new Map([['apps/gw', 'ProxyParameters apps/x not found']]),
  });
  it('replaces the embedded-mode ProxyParameters conditions, keeping observedGeneration', () => {
    assert.deepEqual(out[0]!.status.conditions, [{ type: 'Accepted', status: 'True', reason: 'Accepted', message: 'm', observedGeneration: 4 }]);
  });
  it('sets Accepted=False InvalidParameters on a Gateway with unusable parameters, other conditions kept', () => {
    assert.deepEqual(out[1]!.status.conditions, [{ type: 'Accepted', status: 'False', reason: 'InvalidParameters', message: 'ProxyParameters apps/x not found', observedGeneration: 2 }, { type: 'Programmed', status: 'True', reason: 'Programmed', message: 'ok' }]);
  });
  it('leaves other Gateways alone', () => assert.equal(out[2], translated[2]));
  it('with no verdict at all hands the statuses back as they are (it runs on every edit, over every status)', () => {
    assert.equal(overlayProvisionStatus(translated, { parameters: new Map(), gateways: new Map() }), translated);
  });
});
