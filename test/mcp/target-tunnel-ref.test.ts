/**
 * An MCP static target's own `policies.tunnel.backendRef` (a CONNECT proxy as a Service): the
 * Service is a backend of the published config, so the proxy can look the tunnel up by its key
 * (without it the IR check refuses the config: "backend … is not in the config"), and it carries
 * the connection policy of the ProxyPolicies on that Service.
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
apiVersion: switchboard.dev/v1alpha1
kind: ProxyPolicy
metadata: { name: egress-tls, namespace: default }
spec:
  targetRefs: [{ group: '', kind: Service, name: egress }]
  backend: { tls: { sni: proxy.test } }
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: { name: r, namespace: default }
spec:
  parentRefs: [{ name: gw }]
  rules: [{ matches: [{ path: { type: PathPrefix, value: /mcp } }], backendRefs: [{ group: switchboard.dev, kind: ProxyBackend, name: tools }] }]
---
apiVersion: switchboard.dev/v1alpha1
kind: ProxyBackend
metadata: { name: tools, namespace: default }
spec:
  mcp:
    targets:
      - name: remote
        static:
          host: tools.example
          port: 443
          policies:
            tunnel: { backendRef: { name: egress, port: 3128 } }
`;

describe('an MCP target\'s own tunnel backendRef', () => {
  const objects = parseAllDocuments(OBJECTS).map((d) => d.toJS() as KubeObject).filter(Boolean);
  const { config } = translate(objects);

  it('the tunnel\'s Service is a backend of the config, with its Service\'s connection policy', () => {
    const backend = config.backends['service/default/egress:3128'];
    assert.ok(backend, Object.keys(config.backends).join(', '));
    assert.equal(backend.connection?.tls?.sni, 'proxy.test');
  });

  it('the config passes the IR check', () => assert.deepEqual(validateConfig(config), []));
});
