import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, describe, it } from 'node:test';
import { collectFindings } from './findings.ts';

const MODELS = `apiVersion: gateway.networking.k8s.io/v1
kind: GatewayClass
metadata: {name: switchboard}
spec: {controllerName: switchboard.dev/gateway-controller}
---
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: gw, namespace: default}
spec:
  gatewayClassName: switchboard
  listeners: [{name: http, port: 8080, protocol: HTTP}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: models, namespace: default}
spec:
  parentRefs: [{name: gw}]
  rules:
    - matches: [{path: {type: PathPrefix, value: /v1}}]
      backendRefs: [{group: switchboard.dev, kind: ProxyModel, name: "*"}]
---
apiVersion: switchboard.dev/v1alpha1
kind: ProxyModel
metadata: {name: gpt-4o, namespace: default}
spec:
  parentRefs: [{group: gateway.networking.k8s.io, kind: HTTPRoute, name: models}]
  provider: VendorA
---
apiVersion: switchboard.dev/v1alpha1
kind: ProxyModel
metadata: {name: sneaky, namespace: default}
spec:
  parentRefs: [{group: gateway.networking.k8s.io, kind: HTTPRoute, name: models}]
  provider: Groq
  baseURL: http://169.254.169.254
`;

describe('validate translates with the ProxyModel API as the flag says', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'findings-'));
  after(() => fs.rmSync(dir, { recursive: true, force: true }));
  fs.writeFileSync(path.join(dir, 'models.yaml'), MODELS);
  const messages = async (enabled: boolean): Promise<string[]> => (await collectFindings([dir], { proxyModelsEnabled: enabled })).problems.map((p) => `${p.severity} ${p.object?.kind ?? ''}/${p.object?.name ?? ''} ${p.message}`);

  it('off: the route and the models say the API is disabled, and nothing else is checked', async () => {
    const found = await messages(false);
    assert.ok(found.some((m) => /^note ProxyModel\/gpt-4o .*ProxyModel API is disabled/.test(m)), found.join('\n'));
    assert.ok(!found.some((m) => /169\.254\.169\.254/.test(m)), found.join('\n'));
  });

  it('on: the models are translated — the good one is clean, the SSRF baseURL is an error', async () => {
    const found = await messages(true);
    assert.ok(!found.some((m) => /disabled/.test(m)), found.join('\n'));
    assert.ok(!found.some((m) => /ProxyModel\/gpt-4o /.test(m)), found.join('\n'));
    assert.ok(found.some((m) => /^error ProxyModel\/sneaky Accepted=False \(Invalid\): .*spec\.baseURL: 169\.254\.169\.254/.test(m)), found.join('\n'));
  });
});
