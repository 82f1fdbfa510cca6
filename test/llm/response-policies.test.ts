/**
 * Response policies and backend transformations on an `ai` backend (docs/llm.md "Response policies
 * and backend transformations"), through the official OpenAI SDK and raw HTTP: a backend
 * transformation's request body is made per provider from the client's body (a failover does not
 * hand the next provider what the first one's transformation made), and the gateway's own
 * answers skip the response filters that rewrite the backend's answers.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import OpenAI from 'openai';
import { closedPort } from '../ext/servers.ts';
import { startGateway, type GatewayHarness } from '../support/gateway.ts';
import { ROUTES, llmGatewayYaml } from './gateway-yaml.ts';
import { responseFixture, startMockProvider, type MockProvider } from './mock-provider.ts';

/** The client's `"hi"` becomes the provider's own word: which transformation made the body shows in what the provider got. */
const rewriteHi = (to: string) => `string(request.body).replace('"hi"', '"${to}"')`;
const REPLACED = '{"replaced":true}';

describe('ai backend: backend transformation bodies per provider, gateway answers and response filters (official OpenAI SDK)', () => {
  let failing: MockProvider;
  let healthy: MockProvider;
  let gw: GatewayHarness;

  const content = (at: MockProvider) => {
    const sent = at.requests.at(-1);
    assert.ok(sent, 'the provider saw a request');
    return (sent.json().messages as { content: string }[])[0].content;
  };

  before(async () => {
    [failing, healthy] = await Promise.all([startMockProvider(), startMockProvider()]);
    failing.answer('/', { status: 503, body: { error: { message: 'overloaded', type: 'server_error' } } });
    healthy.answer('/', responseFixture('openai-length'));
    const dead = await closedPort();
    gw = await startGateway(llmGatewayYaml([{ name: 'pair', prefix: '/pair' }, { name: 'gone', prefix: '/gone' }, { name: 'up', prefix: '/up' }], `apiVersion: switchboard.dev/v1alpha1
kind: ProxyBackend
metadata: { name: pair }
spec:
  ai:
    groups:
      - providers:
          - name: first
            providerA: {}
            host: ${failing.host}
            port: ${failing.port}
            policies:
              transformation:
                request:
                  body: |-
                    ${rewriteHi('from-first')}
      - providers:
          - name: second
            providerA: {}
            host: ${healthy.host}
            port: ${healthy.port}
            policies:
              transformation:
                request:
                  body: |-
                    ${rewriteHi('from-second')}
  policies:
    ai: { routes: ${ROUTES} }
---
apiVersion: switchboard.dev/v1alpha1
kind: ProxyBackend
metadata: { name: gone }
spec:
  ai:
    provider: { providerA: {}, host: 127.0.0.1, port: ${dead} }
  policies:
    ai: { routes: ${ROUTES} }
---
apiVersion: switchboard.dev/v1alpha1
kind: ProxyBackend
metadata: { name: up }
spec:
  ai:
    provider: { providerA: {}, host: ${healthy.host}, port: ${healthy.port} }
  policies:
    ai: { routes: ${ROUTES} }
---
apiVersion: switchboard.dev/v1alpha1
kind: ProxyPolicy
metadata: { name: replace-answers }
spec:
  targetRefs: [{ group: gateway.networking.k8s.io, kind: HTTPRoute, name: llm }]
  traffic:
    transformation:
      response:
        body: |-
          '${REPLACED}'
`));
    assert.deepEqual(gw.applyErrors, []);
  });
  after(async () => {
    await gw?.close();
    await Promise.all([failing?.stop(), healthy?.stop()]);
  });

  it('failover to a provider under another policy: each transformation starts from the client\'s body', async () => {
    const res = await fetch(gw.url(80, '/pair/v1/chat/completions'), {
      method: 'POST', headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'gpt-4o', messages: [{ role: 'user', content: 'hi' }] }),
    });
    assert.equal(res.status, 200, await res.text());
    assert.equal(content(failing), 'from-first');
    assert.equal(content(healthy), 'from-second', 'not the first provider\'s result');
  });

  it('the backend\'s answer passes the response filter', async () => {
    const res = await fetch(gw.url(80, '/up/v1/chat/completions'), {
      method: 'POST', headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'gpt-4o', messages: [{ role: 'user', content: 'hi' }] }),
    });
    assert.equal(res.status, 200);
    assert.equal(await res.text(), REPLACED);
  });

  it('the gateway\'s own answer (no provider reachable) skips it: the client gets its error in OpenAI\'s format', async () => {
    const client = new OpenAI({ apiKey: 'sk-client', baseURL: gw.url(80, '/gone/v1'), maxRetries: 0 });
    const err = await client.chat.completions.create({ model: 'gpt-4o', messages: [{ role: 'user', content: 'hi' }] }).then(
      () => assert.fail('expected a refusal'),
      (e: unknown) => e,
    );
    assert.ok(err instanceof OpenAI.APIError, String(err));
    assert.equal(err.status, 502);
    assert.equal((err.error as { code?: string }).code, 'upstream_connect_failed', JSON.stringify(err.error));
  });
});
