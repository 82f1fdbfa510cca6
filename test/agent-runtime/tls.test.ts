/**
 * The agent runtime over TLS, as the regional endpoint is reached: the backend policy's `tls`
 * applies to the connection (its CA, its SNI and the certificate check); without it only the
 * system CAs are trusted, so a private endpoint's certificate is refused (502, nothing invoked).
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { stringify } from 'yaml';
import { createCertificate } from '../support/certs.ts';
import { startGateway, type GatewayHarness } from '../support/gateway.ts';
import { httpGateway } from '../support/manifests.ts';
import { startFakeAgentCore, type FakeAgentCore } from './fake-agentcore.ts';

const doc = (o: unknown): string => `---\n${stringify(o)}`;
const ARN = 'arn:aws:bedrock-agentcore:eu-west-1:123456789012:runtime/tls_agent-Q1';
const KEYS = { id: 'AKIDTLSTEST000001', secret: 'tls/K7MDENG+bPxRfiCYEXAMPLEKEY' };

describe('agent runtime: backend tls on the connection to the endpoint', () => {
  let fake: FakeAgentCore;
  let gw: GatewayHarness;
  const saved = { ...process.env };

  before(async () => {
    const cert = await createCertificate(['agentcore.test']);
    fake = await startFakeAgentCore([{ id: ARN, region: 'eu-west-1' }], { [KEYS.id]: KEYS.secret }, undefined, cert);
    process.env.AWS_ENDPOINT_URL_BEDROCK_AGENTCORE = fake.url;
    process.env.AWS_ACCESS_KEY_ID = KEYS.id;
    process.env.AWS_SECRET_ACCESS_KEY = KEYS.secret;
    delete process.env.AWS_SESSION_TOKEN;
    let yaml = httpGateway()
      + doc({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'endpoint-ca', namespace: 'default' }, data: { 'ca.crt': cert.certPem } })
      + doc({ apiVersion: 'switchboard.dev/v1alpha1', kind: 'ProxyBackend', metadata: { name: 'runtime', namespace: 'default' }, spec: { cloudA: { agentRuntime: { agentRuntimeId: ARN } } } });
    for (const name of ['trusted', 'untrusted']) {
      yaml += doc({
        apiVersion: 'gateway.networking.k8s.io/v1', kind: 'HTTPRoute', metadata: { name, namespace: 'default' },
        spec: { parentRefs: [{ name: 'gw' }], rules: [{ matches: [{ path: { type: 'PathPrefix', value: `/${name}` } }], backendRefs: [{ group: 'switchboard.dev', kind: 'ProxyBackend', name: 'runtime' }] }] },
      });
    }
    yaml += doc({
      apiVersion: 'switchboard.dev/v1alpha1', kind: 'ProxyPolicy', metadata: { name: 'trusted', namespace: 'default' },
      spec: { targetRefs: [{ group: 'gateway.networking.k8s.io', kind: 'HTTPRoute', name: 'trusted' }], backend: { tls: { caCertificateRefs: [{ name: 'endpoint-ca' }], sni: 'agentcore.test' } } },
    });
    gw = await startGateway(yaml);
    assert.deepEqual(gw.applyErrors, []);
  });
  after(async () => {
    process.env = saved;
    await gw?.close();
    await fake?.stop();
  });

  const invoke = (route: string) => fetch(gw.url(80, `/${route}`), { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"prompt":"over tls"}' });

  it('with the policy\'s CA and SNI: the invocation is made over TLS and verifies', async () => {
    const res = await invoke('trusted');
    assert.equal(res.status, 200, await res.clone().text());
    assert.deepEqual(await res.json(), { result: { role: 'assistant', content: [{ text: 'echo: over tls' }] } });
    assert.deepEqual(fake.invocations.at(-1)!.verdict, { ok: true, accessKeyId: KEYS.id });
  });

  it('without a tls policy the endpoint\'s private certificate is not trusted: 502 (upstream_reset, as a failed handshake is on a Service), nothing invoked', async () => {
    const before = fake.invocations.length;
    const res = await invoke('untrusted');
    assert.equal(res.status, 502);
    assert.equal(((await res.json()) as { error: { code: string } }).error.code, 'upstream_reset');
    assert.equal(fake.invocations.length, before);
  });
});
