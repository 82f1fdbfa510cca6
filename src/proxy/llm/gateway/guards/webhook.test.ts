import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { BackendCredentials } from '../../../policies/credentials/backend-credentials.ts';
import { SharedConnections } from '../../../ext/connections.ts';
import { RoundRobinTargets } from '../../../ext/endpoint.ts';
import { startWebhookDouble } from '../../../../../test/llm/guards/webhook-double.ts';
import type { GuardDouble } from '../../../../../test/llm/guards/double.ts';
import { compileWebhook, type WebhookGuardIR } from './webhook.ts';
import type { GuardServices } from './remote.ts';
import type { GuardInput, GuardPhase } from './types.ts';

const COMMON = { rejectStatus: 403, rejectMessage: 'The request was rejected due to inappropriate content' };
const input = (phase: GuardPhase, texts: string[], headers: GuardInput['headers'] = {}): GuardInput => ({
  phase, segments: texts.map((text, i) => ({ role: phase === 'response' ? 'assistant' : i === 0 ? 'system' : 'user', text })), headers, streaming: false,
});
const signal = () => new AbortController().signal;

describe('webhook guard against a double of the Guardrail Webhook API', () => {
  let double: GuardDouble;
  let services: GuardServices;
  const connections = new SharedConnections();
  const config: WebhookGuardIR = { backendKey: 'service/default/hook:8000' };
  before(async () => {
    double = await startWebhookDouble();
    services = {
      credentials: new BackendCredentials({ env: {} }),
      connections,
      endpoints: (e) => {
        assert.equal(e.backendKey, 'service/default/hook:8000');
        return new RoundRobinTargets([{ host: double.host, port: double.port }]);
      },
    };
  });
  after(async () => {
    connections.closeAll();
    await double.close();
  });

  it('request: PassAction passes; the messages go to /request with their roles; no header is forwarded by default', async () => {
    const guard = compileWebhook(config, COMMON, services);
    assert.deepEqual(await guard.check(input('request', ['be brief', 'hi'], { 'x-team': 'a', authorization: 'Bearer client' }), signal()), { action: 'pass' });
    const call = double.calls.at(-1)!;
    assert.equal(call.path, '/request');
    assert.deepEqual(call.json, { body: { messages: [{ role: 'system', content: 'be brief' }, { role: 'user', content: 'hi' }] } });
    assert.equal(call.headers['x-team'], undefined);
    assert.equal(call.headers.authorization, undefined);
    double.assertClean();
  });

  it('request: MaskAction masks each message; RejectAction rejects with its reason', async () => {
    const guard = compileWebhook(config, COMMON, services);
    assert.deepEqual(await guard.check(input('request', ['sys', 'my key is secret-abc ok']), signal()), { action: 'mask', segments: ['sys', 'my key is <SECRET> ok'] });
    assert.deepEqual(await guard.check(input('request', ['sys', 'this is forbidden']), signal()), { action: 'reject', reason: 'forbidden content' });
    double.assertClean();
  });

  it('response: the choices go to /response; masked and rejected likewise', async () => {
    const guard = compileWebhook(config, COMMON, services);
    assert.deepEqual(await guard.check(input('response', ['fine']), signal()), { action: 'pass' });
    assert.deepEqual(double.calls.at(-1)!.json, { body: { choices: [{ message: { role: 'assistant', content: 'fine' } }] } });
    assert.equal(double.calls.at(-1)!.path, '/response');
    assert.deepEqual(await guard.check(input('response', ['use secret-xyz', 'other']), signal()), { action: 'mask', segments: ['use <SECRET>', 'other'] });
    assert.deepEqual(await guard.check(input('response', ['forbidden']), signal()), { action: 'reject', reason: 'forbidden content' });
    double.assertClean();
  });

  it('forwardHeaderMatches: only matching headers and values (Exact, RegularExpression), never connection headers', async () => {
    const guard = compileWebhook({ ...config, forwardHeaderMatches: [
      { type: 'Exact', name: 'X-Team', value: 'a' },
      { type: 'RegularExpression', name: 'x-user', value: 'u-[0-9]+' },
      { type: 'RegularExpression', name: 'content-length', value: '.*' },
    ] }, COMMON, services);
    await guard.check(input('request', ['hi'], { 'x-team': 'a', 'x-user': ['u-1', 'admin', 'u-22'], 'x-other': 'z', 'content-length': '999' }), signal());
    const call = double.calls.at(-1)!;
    assert.equal(call.headers['x-team'], 'a');
    assert.equal(call.headers['x-user'], 'u-1, u-22');
    assert.equal(call.headers['x-other'], undefined);
    assert.notEqual(call.headers['content-length'], '999');
    await guard.check(input('request', ['hi'], { 'x-team': 'b' }), signal());
    assert.equal(double.calls.at(-1)!.headers['x-team'], undefined);
    double.assertClean();
  });

  it('failureMode: FailClosed by default, FailOpen when set; a 422, a wrong-length mask or an unreachable webhook throw', async () => {
    assert.equal(compileWebhook(config, COMMON, services).failOpen, false);
    assert.equal(compileWebhook({ ...config, failureMode: 'FailOpen' }, COMMON, services).failOpen, true);
    const guard = compileWebhook(config, COMMON, services);
    try {
      double.override(() => ({ status: 200, body: { action: { body: { messages: [{ role: 'user', content: 'x' }] } } } }));
      await assert.rejects(Promise.resolve(guard.check(input('request', ['a', 'b']), signal())), /not 2 messages/);
      double.override(() => ({ status: 422, body: { detail: [] } }));
      await assert.rejects(Promise.resolve(guard.check(input('request', ['a']), signal())), /answered 422/);
      double.override(() => ({ status: 200, body: { verdict: 'ok' } }));
      await assert.rejects(Promise.resolve(guard.check(input('request', ['a']), signal())), /without an action/);
    } finally {
      double.override(undefined);
    }
    const gone = compileWebhook(config, COMMON, { ...services, endpoints: () => new RoundRobinTargets([{ host: '127.0.0.1', port: 1 }]) });
    await assert.rejects(Promise.resolve(gone.check(input('request', ['a']), signal())), /webhook: /);
  });

  it('a backend with two ready endpoints: the checks go to each in turn', async () => {
    const second = await startWebhookDouble();
    try {
      const two = new RoundRobinTargets([{ host: double.host, port: double.port }, { host: second.host, port: second.port }]);
      const guard = compileWebhook(config, COMMON, { ...services, endpoints: () => two });
      const [first, other] = [double.calls.length, second.calls.length];
      for (let i = 0; i < 4; i++) assert.deepEqual(await guard.check(input('request', ['hi']), signal()), { action: 'pass' });
      assert.deepEqual([double.calls.length - first, second.calls.length - other], [2, 2]);
    } finally {
      await second.close();
    }
  });

  it('an unresolved backendRef does not compile', () => {
    assert.throws(() => compileWebhook({}, COMMON, services), /not resolved/);
  });
});
