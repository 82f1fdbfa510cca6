/**
 * Secrets never shown (issue 11, item 2): the real CLI with a provider key in the documented
 * `Authorization: "Bearer sk-…"` Secret form (through stringData and through base64 data), client
 * API keys and a password file from Secrets, and an access log that asks for the credential
 * headers. After ordinary and failing requests, no form of any Secret value appears in
 * /config_dump, /status or the process's log output.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { startMockProvider, type MockProvider } from '../llm/mock-provider.ts';
import { gatewayClass, gateway } from '../support/manifests.ts';
import { startHostileGateway, type HostileGateway } from './harness.ts';

const PROVIDER_KEY = 'sk-proj-hostileMarkerStringData0123456789';
const PROVIDER_KEY_DATA = 'sk-proj-hostileMarkerBase64Data0123456789';
const CLIENT_KEY = 'ck-hostileMarkerClientKey0123456789';
const HTPASSWD = 'hostile-marker-user:{SHA}qUqP5cyxm6YcTAhz05Hph5gvu9M=';

/** Every form a Secret value could take on its way to a dump, a status or a log line. */
function forms(value: string): string[] {
  return [...new Set([
    value,
    value.replace(/^Bearer\s+/, ''),
    Buffer.from(value).toString('base64'),
    Buffer.from(`Bearer ${value}`).toString('base64'),
    createHash('sha256').update(value).digest('hex'),
    value.split(':')[0],
  ])];
}
const MARKERS = [PROVIDER_KEY, PROVIDER_KEY_DATA, CLIENT_KEY, HTPASSWD].flatMap(forms);

function yaml(provider: MockProvider): string {
  const ai = (name: string, secret: string) => `---
apiVersion: switchboard.dev/v1alpha1
kind: ProxyBackend
metadata: { name: ${name} }
spec:
  ai: { provider: { providerA: { model: gpt-4o }, host: ${provider.host}, port: ${provider.port} } }
  policies:
    auth: { secretRef: { name: ${secret} } }
    ai: { routes: { /v1/chat/completions: Completions } }
`;
  return gatewayClass() + gateway('gw', [{ name: 'http', port: 65000 }]).replace('port: 65000', 'port: {{listener.port}}') + `---
apiVersion: v1
kind: Secret
metadata: { name: key-stringdata }
stringData: { Authorization: "Bearer ${PROVIDER_KEY}" }
---
apiVersion: v1
kind: Secret
metadata: { name: key-data }
data: { Authorization: ${Buffer.from(`Bearer ${PROVIDER_KEY_DATA}`).toString('base64')} }
---
apiVersion: v1
kind: Secret
metadata: { name: client-keys }
stringData: { app: ${CLIENT_KEY} }
---
apiVersion: v1
kind: Secret
metadata: { name: htpasswd }
stringData: { .htaccess: "${HTPASSWD}" }
${ai('via-stringdata', 'key-stringdata')}${ai('via-data', 'key-data')}---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: { name: llm }
spec:
  parentRefs: [{ name: gw }]
  rules:
    - matches: [{ path: { type: PathPrefix, value: /a/v1 } }]
      filters: [{ type: URLRewrite, urlRewrite: { path: { type: ReplacePrefixMatch, replacePrefixMatch: /v1 } } }]
      backendRefs: [{ group: switchboard.dev, kind: ProxyBackend, name: via-stringdata }]
    - matches: [{ path: { type: PathPrefix, value: /b/v1 } }]
      filters: [{ type: URLRewrite, urlRewrite: { path: { type: ReplacePrefixMatch, replacePrefixMatch: /v1 } } }]
      backendRefs: [{ group: switchboard.dev, kind: ProxyBackend, name: via-data }]
---
apiVersion: switchboard.dev/v1alpha1
kind: ProxyPolicy
metadata: { name: client-auth }
spec:
  targetRefs: [{ group: gateway.networking.k8s.io, kind: HTTPRoute, name: llm }]
  traffic:
    apiKeyAuthentication: { secretRef: { name: client-keys } }
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: { name: basic }
spec:
  parentRefs: [{ name: gw }]
  rules:
    - matches: [{ path: { type: PathPrefix, value: /basic } }]
      backendRefs: [{ group: switchboard.dev, kind: ProxyBackend, name: via-data }]
---
apiVersion: switchboard.dev/v1alpha1
kind: ProxyPolicy
metadata: { name: basic-auth }
spec:
  targetRefs: [{ group: gateway.networking.k8s.io, kind: HTTPRoute, name: basic }]
  traffic:
    basicAuthentication: { secretRef: { name: htpasswd } }
---
apiVersion: switchboard.dev/v1alpha1
kind: ProxyPolicy
metadata: { name: access-log }
spec:
  targetRefs: [{ group: gateway.networking.k8s.io, kind: Gateway, name: gw }]
  frontend:
    accessLog:
      attributes:
        add:
          - { name: hdrs, expression: 'request.headers' }
          - { name: auth, expression: 'request.headers["authorization"]' }
`;
}

// With two workers the requests (and their access log lines) are served by cluster workers: the
// primary must ship the Secret values to them for their log lines to be scrubbed too.
for (const workers of [1, 2]) describe(`hostile: Secret values never shown (--workers ${workers})`, () => {
  let provider: MockProvider;
  let gw: HostileGateway;
  before(async () => {
    provider = await startMockProvider();
    provider.answer('/v1/chat/completions', (req) => (req.headers.authorization?.includes('hostileMarkerBase64')
      ? { status: 500, headers: { 'content-type': 'application/json' }, body: { error: { message: 'upstream broke' } } }
      : { status: 200, headers: { 'content-type': 'application/json' }, body: { id: 'c1', object: 'chat.completion', created: 1, model: 'gpt-4o', choices: [{ index: 0, message: { role: 'assistant', content: 'hi' }, finish_reason: 'stop' }] } }));
    // info: the access log and the config-applied lines are part of what must not leak.
    gw = await startHostileGateway(yaml(provider), { logLevel: 'info', workers });
  });
  after(async () => { await gw?.close(); await provider?.stop(); });

  it('the provider gets the key, and no dump, status or log line shows any form of any Secret value', async () => {
    const chat = JSON.stringify({ model: 'gpt-4o', messages: [{ role: 'user', content: 'hello' }] });
    const headers = { 'content-type': 'application/json', authorization: `Bearer ${CLIENT_KEY}` };
    const ok = await gw.request({ method: 'POST', path: '/a/v1/chat/completions', headers, body: chat });
    assert.equal(ok.status, 200, ok.text);
    const failing = await gw.request({ method: 'POST', path: '/b/v1/chat/completions', headers, body: chat });
    assert.ok(failing.status >= 500, `the provider's failure reaches the client (${failing.status})`);
    const unauthenticated = await gw.request({ method: 'POST', path: '/a/v1/chat/completions', headers: { ...headers, authorization: `Bearer ${CLIENT_KEY}x` }, body: chat });
    assert.equal(unauthenticated.status, 401);
    const badPassword = await gw.request({ path: '/basic', headers: { authorization: `Basic ${Buffer.from('hostile-marker-user:wrong').toString('base64')}` } });
    assert.equal(badPassword.status, 401);
    // The keys did their work: the provider saw both, without the prefix doubled.
    const seen = provider.requests.map((r) => r.headers.authorization);
    assert.ok(seen.includes(`Bearer ${PROVIDER_KEY}`) && seen.includes(`Bearer ${PROVIDER_KEY_DATA}`), JSON.stringify(seen));

    const dump = await gw.admin('/config_dump');
    const status = await gw.admin('/status');
    assert.equal(dump.status, 200);
    assert.match(dump.text, /\[redacted\]/);
    // Let the access log lines of the requests above reach the output.
    await new Promise((resolve) => setTimeout(resolve, 200));
    const output = gw.output();
    assert.match(output, /"hdrs"|hdrs=/, 'the access log wrote the header attributes');
    for (const [where, text] of [['/config_dump', dump.text], ['/status', status.text], ['the log output', output]] as const) {
      for (const marker of MARKERS) assert.ok(!text.includes(marker), `${where} shows ${JSON.stringify(marker)}`);
    }
  });
});
