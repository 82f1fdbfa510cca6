import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { KubeObject } from '../../api/gateway/object.ts';
import { referencePermitted, type RefFrom, type RefTo } from './refs.ts';

function grant(namespace: string, spec: unknown): KubeObject {
  return { apiVersion: 'gateway.networking.k8s.io/v1beta1', kind: 'ReferenceGrant', metadata: { name: 'g', namespace }, spec };
}

const route: RefFrom = { group: 'gateway.networking.k8s.io', kind: 'HTTPRoute', namespace: 'apps' };
const service: RefTo = { group: '', kind: 'Service', namespace: 'backends', name: 'api' };
const fromApps = [{ group: 'gateway.networking.k8s.io', kind: 'HTTPRoute', namespace: 'apps' }];

describe('referencePermitted', () => {
  const cases: { name: string; grants: KubeObject[]; from?: RefFrom; to?: RefTo; want: boolean }[] = [
    { name: 'same namespace needs no grant', grants: [], to: { ...service, namespace: 'apps' }, want: true },
    { name: 'cross namespace without grant', grants: [], want: false },
    { name: 'grant for the kind', grants: [grant('backends', { from: fromApps, to: [{ group: '', kind: 'Service' }] })], want: true },
    { name: 'grant naming this object', grants: [grant('backends', { from: fromApps, to: [{ group: '', kind: 'Service', name: 'api' }] })], want: true },
    { name: 'grant naming another object', grants: [grant('backends', { from: fromApps, to: [{ group: '', kind: 'Service', name: 'other' }] })], want: false },
    { name: 'grant for another kind', grants: [grant('backends', { from: fromApps, to: [{ group: '', kind: 'Secret' }] })], want: false },
    { name: 'grant from another namespace', grants: [grant('backends', { from: [{ ...fromApps[0], namespace: 'web' }], to: [{ group: '', kind: 'Service' }] })], want: false },
    { name: 'grant from another kind', grants: [grant('backends', { from: [{ ...fromApps[0], kind: 'GRPCRoute' }], to: [{ group: '', kind: 'Service' }] })], want: false },
    { name: 'grant in the wrong namespace', grants: [grant('apps', { from: fromApps, to: [{ group: '', kind: 'Service' }] })], want: false },
    { name: 'malformed grant is ignored', grants: [grant('backends', { from: 'x', to: null })], want: false },
  ];
  for (const c of cases) {
    it(c.name, () => {
      const byNs = new Map<string, KubeObject[]>();
      for (const g of c.grants) byNs.set(g.metadata.namespace!, [...(byNs.get(g.metadata.namespace!) ?? []), g]);
      assert.equal(referencePermitted(byNs, c.from ?? route, c.to ?? service), c.want);
    });
  }
});
