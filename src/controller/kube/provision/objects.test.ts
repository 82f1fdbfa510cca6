import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { KubeObject } from '../../../api/gateway/object.ts';
import { GATEWAY_CLASS_LABEL, provisionObjects } from './objects.ts';

const gatewayOf = (gatewayClassName: string): KubeObject => ({
  apiVersion: 'gateway.networking.k8s.io/v1', kind: 'Gateway', metadata: { name: 'gw', namespace: 'apps', uid: 'u' },
  spec: { gatewayClassName, listeners: [{ name: 'http', port: 80, protocol: 'HTTP' }] },
} as KubeObject);

describe('the gateway-class-name label (what the chart\'s PodMonitor selects)', () => {
  const rows: ReadonlyArray<{ name: string; className: string; label: string | undefined }> = [
    { name: 'a class name is the label on the objects and the pods', className: 'switchboard', label: 'switchboard' },
    { name: 'a class name longer than a label value (63) is left out, not an apply failure', className: `c${'x'.repeat(63)}`, label: undefined },
  ];
  for (const row of rows) {
    it(row.name, () => {
      const objects = provisionObjects(gatewayOf(row.className), { classLevel: undefined, gatewayLevel: undefined }, { controllerUrl: 'http://c:9978', defaultTag: '1' });
      const deployment = objects.find((o) => o.kind === 'Deployment') as { metadata: { labels: Record<string, string> }; spec: { template: { metadata: { labels: Record<string, string> } } } };
      assert.equal(deployment.metadata.labels[GATEWAY_CLASS_LABEL], row.label);
      assert.equal(deployment.spec.template.metadata.labels[GATEWAY_CLASS_LABEL], row.label);
    });
  }
});
