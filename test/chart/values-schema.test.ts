/**
 * chart/values.schema.json is generated (npm run gen:chart-schema) and must match its source;
 * chart/values.yaml must satisfy it, and it must refuse what Helm should refuse.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { Value } from 'typebox/value';
import { ChartValues } from '../../scripts/chart-values-schema.ts';
import { DASHBOARD_COPY, DASHBOARD_SOURCE, SCHEMA_FILE, schemaText } from '../../scripts/gen-chart-schema.ts';
import { coalesce, defaultValues } from './render.ts';

describe('chart values schema', () => {
  it('chart/values.schema.json is up to date (npm run gen:chart-schema)', () => {
    assert.equal(readFileSync(SCHEMA_FILE, 'utf8'), schemaText());
  });

  it('chart/dashboards/switchboard.json is the dashboard of deploy/grafana (npm run gen:chart-schema)', () => {
    assert.equal(readFileSync(DASHBOARD_COPY, 'utf8'), readFileSync(DASHBOARD_SOURCE, 'utf8'));
  });

  it('accepts values.yaml', () => {
    const errors = [...Value.Errors(ChartValues, defaultValues())].map((e) => `${e.instancePath}: ${e.message}`);
    assert.deepEqual(errors, []);
  });

  // SPEC.md "Installation chart values": the defaults it names (the rest are "", {}, [] or null).
  const SPEC_DEFAULTS: [string, unknown][] = [
    ['proxyModels.enabled', false], ['commonLabels', {}], ['controller.replicaCount', 1], ['controller.logLevel', 'info'],
    ['controller.image.pullPolicy', ''], ['controller.image.registry', ''], ['controller.image.tag', ''],
    ['controller.priorityClassName', ''], ['controller.revisionHistoryLimit', null],
    ['controller.service.enabled', true], ['controller.service.type', 'ClusterIP'],
    ['controller.service.ports', { agwGrpc: 9978, health: 9093, metrics: 9092 }], ['controller.service.publishNotReadyAddresses', false],
    ['controller.xds.mode', 'tls'], ['controllerName', ''], ['gatewayClassName', ''], ['gatewayClassParametersRefs', {}],
    ['discoveryNamespaceSelectors', []], ['fullnameOverride', ''], ['nameOverride', ''], ['image.pullPolicy', 'IfNotPresent'], ['image.tag', ''],
    ['imagePullSecrets', []], ['inferenceExtension.enabled', false],
    ['istio', { autoEnabled: false, caAddress: '', clusterId: '', namespace: '', network: '', revision: '' }],
    ['monitoring.enabled', false], ['monitoring.grafanaDashboard', { enabled: true, labels: { grafana_dashboard: '1' } }],
    ['monitoring.proxy.podMonitor.enabled', true], ['monitoring.proxy.namespaceSelector', {}],
    ['monitoring.serviceMonitor', { enabled: true, extraLabels: {}, interval: '15s' }],
    ['proxy.image.registry', ''], ['proxy.image.tag', ''], ['resources', { requests: { cpu: '100m', memory: '128Mi' } }],
    ['serviceAccount', { create: true, name: '', annotations: {} }],
  ];
  for (const [path, want] of SPEC_DEFAULTS) {
    it(`values.yaml: ${path} defaults as SPEC.md says`, () => {
      const got = path.split('.').reduce<unknown>((v, k) => (v as Record<string, unknown>)[k], defaultValues());
      assert.deepEqual(got, want);
    });
  }

  const REFUSED: { name: string; values: Record<string, unknown> }[] = [
    { name: 'an unknown top-level key', values: { replicaCount: 2 } },
    { name: 'a misspelt nested key', values: { controller: { xds: { mdoe: 'tls' } } } },
    { name: 'an xds mode that does not exist', values: { controller: { xds: { mode: 'mtls' } } } },
    { name: 'a port out of range', values: { controller: { service: { ports: { health: 70000 } } } } },
    { name: 'a string replica count', values: { controller: { replicaCount: '2' } } },
    { name: 'a selector with an unknown operator', values: { discoveryNamespaceSelectors: [{ matchExpressions: [{ key: 'a', operator: 'Like' }] }] } },
    { name: 'a parametersRef without a name', values: { gatewayClassParametersRefs: { switchboard: { namespace: 'ops' } } } },
    { name: 'a bad scrape interval', values: { monitoring: { serviceMonitor: { interval: 'often' } } } },
    { name: 'a bad log level', values: { controller: { logLevel: 'loud' } } },
  ];
  for (const row of REFUSED) {
    it(`refuses ${row.name}`, () => {
      assert.equal(Value.Check(ChartValues, coalesce(defaultValues(), row.values)), false);
    });
  }
});
