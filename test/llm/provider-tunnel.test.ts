/**
 * A provider's own inline `policies.tunnel.backendRef` (a CONNECT proxy as a Service) on an `ai`
 * ProxyBackend: the Service is a backend of the published config (the proxy looks the tunnel up
 * by its key, so without it the provider cannot be reached), and a request from the official
 * OpenAI SDK reaches the provider through the CONNECT proxy. The backend's other provider, with
 * no tunnel, is called directly.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import OpenAI from 'openai';
import { validateConfig } from '../../src/ir/validate.ts';
import { startConnectProxy, type ConnectProxy } from '../support/connect-proxy.ts';
import { startGateway, type GatewayHarness } from '../support/gateway.ts';
import { service } from '../support/manifests.ts';
import { ROUTES, llmGatewayYaml } from './gateway-yaml.ts';
import { responseFixture, startMockProvider, type MockProvider } from './mock-provider.ts';

describe('an ai provider\'s own tunnel backendRef (official OpenAI SDK)', () => {
  let tunnelled: MockProvider;
  let direct: MockProvider;
  let proxy: ConnectProxy;
  let gw: GatewayHarness;

  const chat = (prefix: string) =>
    new OpenAI({ apiKey: 'sk-client', baseURL: gw.url(80, prefix), maxRetries: 0 })
      .chat.completions.create({ model: 'gpt-4o', messages: [{ role: 'user', content: 'hi' }], max_tokens: 5 });

  before(async () => {
    [tunnelled, direct, proxy] = await Promise.all([startMockProvider(), startMockProvider(), startConnectProxy()]);
    tunnelled.answer('/', responseFixture('openai-tool-calls'));
    direct.answer('/', responseFixture('openai-tool-calls'));
    const proxyPort = Number(new URL(proxy.url).port);
    gw = await startGateway(llmGatewayYaml([{ name: 'via-tunnel', prefix: '/via-tunnel' }, { name: 'direct', prefix: '/direct' }], `${service('egress', { host: '127.0.0.1', port: proxyPort }, { port: 3128 })}---
apiVersion: switchboard.dev/v1alpha1
kind: ProxyBackend
metadata: { name: via-tunnel }
spec:
  ai:
    groups:
      - providers:
          - name: tunnelled
            providerA: {}
            host: ${tunnelled.host}
            port: ${tunnelled.port}
            policies:
              tunnel: { backendRef: { name: egress, port: 3128 } }
  policies:
    auth: { key: sk-provider }
    ai: { routes: ${ROUTES} }
---
apiVersion: switchboard.dev/v1alpha1
kind: ProxyBackend
metadata: { name: direct }
spec:
  ai:
    groups:
      - providers:
          - name: plain
            providerA: {}
            host: ${direct.host}
            port: ${direct.port}
  policies:
    auth: { key: sk-provider }
    ai: { routes: ${ROUTES} }
`));
    assert.deepEqual(gw.applyErrors, []);
  });
  after(async () => {
    await gw?.close();
    await Promise.all([tunnelled?.stop(), direct?.stop(), proxy?.close()]);
  });

  it('the tunnel\'s Service is a backend of the config, and the config passes the IR check', () => {
    assert.ok(gw.config.backends['service/default/egress:3128'], Object.keys(gw.config.backends).join(', '));
    assert.deepEqual(validateConfig(gw.config), []);
  });

  it('a request reaches the provider through the CONNECT proxy the Service names', async () => {
    const before = proxy.targets.length;
    const answer = await chat('/via-tunnel');
    assert.ok(answer.choices.length > 0);
    assert.equal(tunnelled.requests.length, 1);
    assert.deepEqual(proxy.targets.slice(before), [`${tunnelled.host}:${tunnelled.port}`]);
  });

  it('a provider without a tunnel is called directly', async () => {
    const before = proxy.targets.length;
    await chat('/direct');
    assert.equal(direct.requests.length, 1);
    assert.equal(proxy.targets.length, before);
  });
});
