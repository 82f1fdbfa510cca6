/**
 * Realtime WebSockets with `oauthTokenExchange` on the ai backend: the handshake's client token
 * (Authorization Bearer, an ID token from a local IdP) is exchanged (RFC 8693) and the provider
 * sees only the exchanged, IdP-signed token; a handshake without a token is refused with 401 in
 * OpenAI's error format before any provider is contacted.
 */
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { after, before, describe, it } from 'node:test';
import WebSocket from 'ws';
import { startFakeIdp, verifyEs256Sync, type FakeIdp } from '../../src/proxy/policies/backend/testing/fake-oauth.ts';
import { startGateway, type GatewayHarness } from '../support/gateway.ts';
import { llmGatewayYaml } from './gateway-yaml.ts';
import { startMockRealtime, type MockRealtime } from './mock-realtime.ts';

describe('LLM Realtime with an exchanged token', () => {
  let idp: FakeIdp;
  let mock: MockRealtime;
  let gw: GatewayHarness;

  before(async () => {
    idp = await startFakeIdp({ 'rt-gateway': { secret: 'rt-s3cret' } });
    mock = await startMockRealtime((h) => verifyEs256Sync(/^Bearer (.+)$/.exec(h.authorization ?? '')?.[1] ?? '', idp.publicKey, idp.issuer, 'realtime-api')?.sub === 'frank');
    gw = await startGateway(llmGatewayYaml([{ name: 'rt', prefix: '/rt' }], `
apiVersion: switchboard.dev/v1alpha1
kind: ProxyBackend
metadata: { name: rt }
spec:
  ai:
    provider: { providerA: {}, host: ${mock.host}, port: ${mock.port} }
  policies:
    auth: { oauthTokenExchange: { url: "${idp.url}", path: /oauth2/token, audiences: [realtime-api], clientAuth: { clientId: rt-gateway, method: ClientSecretPost, secretRef: { name: rt-client } } } }
    ai: { routes: { /v1/realtime: Realtime } }
---
apiVersion: v1
kind: Secret
metadata: { name: rt-client }
stringData: { clientSecret: rt-s3cret }
`));
    assert.deepEqual(gw.applyErrors, []);
  });
  after(async () => {
    await gw?.close();
    await mock?.stop();
    await idp?.stop();
  });

  const connect = (headers: Record<string, string>) => {
    const ws = new WebSocket(`ws://127.0.0.1:${gw.portOf(80)}/rt/v1/realtime?model=gpt-realtime`, ['realtime'], { headers });
    return new Promise<{ ws?: WebSocket; status?: number; body?: string }>((resolve, reject) => {
      ws.once('open', () => resolve({ ws }));
      ws.once('unexpected-response', (_req, res) => {
        let body = '';
        res.on('data', (c: Buffer) => (body += c.toString())).on('end', () => resolve({ status: res.statusCode, body }));
      });
      ws.once('error', reject);
    });
  };

  it('opens with the exchanged token; the provider never sees the client token', async () => {
    const idToken = await idp.idToken('frank', 'rt-gateway');
    const opened = await connect({ authorization: `Bearer ${idToken}` });
    assert.ok(opened.ws, `refused: ${opened.status} ${opened.body}`);
    opened.ws.close();
    await once(opened.ws, 'close');
    const seen = mock.handshakes.at(-1)!;
    assert.notEqual(seen.headers.authorization, `Bearer ${idToken}`);
    assert.equal(idp.requests.at(-1)?.form.subject_token, idToken);
  });

  it('no client token: 401 in OpenAI error format, no provider handshake', async () => {
    const before = mock.handshakes.length;
    const refused = await connect({});
    assert.equal(refused.status, 401);
    assert.match(JSON.parse(refused.body ?? '{}').error?.message ?? '', /subject token/);
    assert.equal(mock.handshakes.length, before);
  });
});
