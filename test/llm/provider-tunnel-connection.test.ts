/**
 * A tunnel Service named inside a provider's own policies (an `ai` ProxyBackend's provider, a
 * ProxyModel's `policies.tunnel`) is an external service the gateway calls itself, like one a
 * ProxyPolicy's tunnel names: the backend policies attached to that Service (here `tls`) give the
 * config's backend its `connection`, which the proxy uses to speak to the CONNECT proxy
 * (test/e2e/policy-external-services.test.ts shows that hop over TLS).
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parseAllDocuments } from 'yaml';
import type { KubeObject } from '../../src/api/gateway/object.ts';
import { translate } from '../../src/controller/translate/index.ts';
import { validateConfig } from '../../src/ir/validate.ts';
import { gateway, gatewayClass } from '../support/manifests.ts';

const OBJECTS = `${gatewayClass()}${gateway('gw', [{ name: 'http', port: 80 }])}---
apiVersion: v1
kind: Service
metadata: { name: egress, namespace: default }
spec: { ports: [{ port: 3128 }] }
---
apiVersion: v1
kind: Service
metadata: { name: squid, namespace: default }
spec: { ports: [{ port: 3129 }] }
---
apiVersion: switchboard.dev/v1alpha1
kind: ProxyPolicy
metadata: { name: proxies-tls, namespace: default }
spec:
  targetRefs: [{ group: '', kind: Service, name: egress }, { group: '', kind: Service, name: squid }]
  backend: { tls: { sni: proxy.test } }
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: { name: r, namespace: default }
spec:
  parentRefs: [{ name: gw }]
  rules:
    - name: p
      matches: [{ path: { type: PathPrefix, value: /p } }]
      backendRefs: [{ group: switchboard.dev, kind: ProxyBackend, name: via-tunnel }]
    - name: models
      matches: [{ path: { type: PathPrefix, value: /v1 } }]
      backendRefs: [{ group: switchboard.dev, kind: ProxyModel, name: '*' }]
---
apiVersion: switchboard.dev/v1alpha1
kind: ProxyBackend
metadata: { name: via-tunnel, namespace: default }
spec:
  ai:
    groups:
      - providers:
          - name: t
            providerA: {}
            host: vendor.example
            port: 443
            policies:
              tunnel: { backendRef: { name: egress, port: 3128 } }
---
apiVersion: switchboard.dev/v1alpha1
kind: ProxyModel
metadata: { name: tunnelled, namespace: default }
spec:
  parentRefs: [{ group: gateway.networking.k8s.io, kind: HTTPRoute, name: r, sectionName: models }]
  provider: VendorA
  policies: { tunnel: { backendRef: { name: squid, port: 3129 } } }
`;

describe('a tunnel Service named by a provider\'s own policies gets its Service\'s connection policy', () => {
  const objects = parseAllDocuments(OBJECTS).map((d) => d.toJS() as KubeObject).filter(Boolean);
  const { config } = translate(objects, { proxyModels: true });

  const rows = [
    { name: 'an ai ProxyBackend provider\'s tunnel', key: 'service/default/egress:3128' },
    { name: 'a ProxyModel\'s tunnel', key: 'service/default/squid:3129' },
  ];
  for (const row of rows) {
    it(row.name, () => {
      const backend = config.backends[row.key];
      assert.ok(backend, `${row.key} in ${Object.keys(config.backends).join(', ')}`);
      assert.equal(backend.connection?.tls?.sni, 'proxy.test', JSON.stringify(backend));
    });
  }

  it('the config passes the IR check', () => assert.deepEqual(validateConfig(config), []));
});
