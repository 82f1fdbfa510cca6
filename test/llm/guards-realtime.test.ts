/**
 * Prompt guards on Realtime sessions (`streaming: Enabled`, docs/llm.md "Prompt guards") through a
 * listening gateway with a `ws` client and the local Realtime provider: a client text message with
 * an SSN is refused with an `error` event and the session closes, never reaching the provider; an
 * email is masked in the message the provider gets; the provider's text is judged by the response
 * guards; without `streaming: Enabled` messages pass unjudged.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import WebSocket from 'ws';
import { startGateway, type GatewayHarness } from '../support/gateway.ts';
import { llmGatewayYaml } from './gateway-yaml.ts';
import { startMockRealtime, type MockRealtime } from './mock-realtime.ts';

const ROUTES = '{ /v1/realtime: Realtime }';

describe('prompt guards on Realtime sessions (ws client)', () => {
  let mock: MockRealtime;
  let gw: GatewayHarness;

  const backend = (name: string, guard: string) => `apiVersion: switchboard.dev/v1alpha1
kind: ProxyBackend
metadata: { name: ${name} }
spec:
  ai:
    provider: { providerA: { model: rt-model }, host: ${mock.host}, port: ${mock.port} }
  policies:
    auth: { key: sk-gateway }
    ai:
      routes: ${ROUTES}
      promptGuard: ${guard}
`;

  before(async () => {
    mock = await startMockRealtime(() => true);
    const names = ['guarded', 'unguarded', 'answers'];
    gw = await startGateway(llmGatewayYaml(names.map((n) => ({ name: n, prefix: `/${n}` })), [
      backend('guarded', '{ streaming: Enabled, request: [{ regex: { builtins: [Ssn], action: Reject }, response: { message: "no SSNs" } }, { regex: { builtins: [Email] } }] }'),
      backend('unguarded', '{ request: [{ regex: { builtins: [Ssn], action: Reject } }], response: [{ regex: { matches: ["Hello from"], action: Reject } }] }'),
      backend('answers', '{ streaming: Enabled, response: [{ regex: { matches: ["Hello from"], action: Reject }, response: { message: "no greetings" } }] }'),
    ].join('---\n')));
    assert.deepEqual(gw.applyErrors, []);
  });
  after(async () => {
    await gw?.close();
    await mock?.stop();
  });

  /** A session: every event the client got, in order, and a promise for the close code. */
  async function session(prefix: string): Promise<{ ws: WebSocket; events: Record<string, unknown>[]; closed: Promise<number>; next: (type: string) => Promise<Record<string, unknown>> }> {
    const ws = new WebSocket(gw.url(80, `${prefix}/v1/realtime`).replace('http', 'ws'), ['realtime']);
    const events: Record<string, unknown>[] = [];
    const waiters: [string, (e: Record<string, unknown>) => void][] = [];
    ws.on('message', (data) => {
      const e = JSON.parse(data.toString()) as Record<string, unknown>;
      events.push(e);
      for (const [i, [type, resolve]] of waiters.entries()) if (e.type === type) { waiters.splice(i, 1); resolve(e); break; }
    });
    const closed = new Promise<number>((resolve) => ws.once('close', (code) => resolve(code)));
    await new Promise<void>((resolve, reject) => { ws.once('open', () => resolve()); ws.once('error', reject); });
    const next = (type: string) => {
      const seen = events.find((e) => e.type === type);
      return seen ? Promise.resolve(seen) : new Promise<Record<string, unknown>>((resolve) => waiters.push([type, resolve]));
    };
    await next('session.created');
    return { ws, events, closed, next };
  }

  const userText = (text: string) => JSON.stringify({ type: 'conversation.item.create', item: { type: 'message', role: 'user', content: [{ type: 'input_text', text }] } });

  it('a client message with an SSN gets an error event and the session ends; the provider never sees it', async () => {
    const s = await session('/guarded');
    const before = mock.received.length;
    s.ws.send(userText(`my ssn is 123-45-6789`));
    const error = await s.next('error');
    assert.deepEqual(error.error, { type: 'invalid_request_error', code: 'guard_rejected', message: 'no SSNs', param: null });
    assert.equal(await s.closed, 1008);
    assert.equal(mock.received.slice(before).some((m) => String(m).includes('6789')), false);
  });

  it('an email in a client message reaches the provider masked; other messages keep their order', async () => {
    const s = await session('/guarded');
    const before = mock.received.length;
    s.ws.send(userText('mail jane@example.org'));
    s.ws.send(JSON.stringify({ type: 'response.create' }));
    await s.next('response.done');
    const got = mock.received.slice(before).map(String);
    assert.equal(got.length, 2);
    assert.match(got[0] as string, /mail <EMAIL>/);
    assert.match(got[1] as string, /response\.create/);
    s.ws.close();
    await s.closed;
  });

  it('provider text is judged by the response guards: a rejection replaces it with an error event and ends the session', async () => {
    const s = await session('/answers');
    s.ws.send(JSON.stringify({ type: 'response.create' }));
    const error = await s.next('error');
    assert.equal((error.error as { message: string }).message, 'no greetings');
    assert.equal(await s.closed, 1008);
    assert.equal(s.events.some((e) => e.type === 'response.output_text.delta'), false, 'the rejected text never reached the client');
  });

  it('without streaming: Enabled Realtime messages are not judged', async () => {
    const s = await session('/unguarded');
    s.ws.send(userText('my ssn is 123-45-6789'));
    s.ws.send(JSON.stringify({ type: 'response.create' }));
    const delta = await s.next('response.output_text.delta');
    assert.match(String(delta.delta), /Hello from/);
    s.ws.close();
    await s.closed;
  });
});
