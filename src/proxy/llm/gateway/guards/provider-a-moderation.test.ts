import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { BackendCredentials } from '../../../policies/credentials/backend-credentials.ts';
import { startOpenAIModerationDouble } from '../../../../../test/llm/guards/openai-moderation-double.ts';
import type { GuardDouble } from '../../../../../test/llm/guards/double.ts';
import { compileProviderAModeration } from './provider-a-moderation.ts';
import { createCertificate } from '../../../../../test/support/certs.ts';
import type { GuardInput } from './types.ts';

const COMMON = { rejectStatus: 403, rejectMessage: 'The request was rejected due to inappropriate content' };
const request = (...texts: string[]): GuardInput => ({ phase: 'request', segments: texts.map((text, i) => ({ role: i === 0 ? 'system' : 'user', text })), headers: {}, streaming: false });
const signal = () => new AbortController().signal;

describe('providerAModeration guard against a double of OpenAI /v1/moderations', () => {
  let double: GuardDouble;
  let services: { credentials: BackendCredentials; vendorOrigins: { providerAModeration: string } };
  before(async () => {
    double = await startOpenAIModerationDouble('sk-mod');
    services = { credentials: new BackendCredentials({ env: {} }), vendorOrigins: { providerAModeration: double.origin } };
  });
  after(() => double.close());

  it('passes clean text; sends every segment as one input item, the default model and the key as bearer', async () => {
    const guard = compileProviderAModeration({ policies: { auth: { key: 'sk-mod' } } }, COMMON, services);
    assert.deepEqual(await guard.check(request('be nice', 'hello there'), signal()), { action: 'pass' });
    const call = double.calls.at(-1)!;
    assert.deepEqual(call.json, { model: 'omni-moderation-latest', input: ['be nice', 'hello there'] });
    assert.equal(call.headers.authorization, 'Bearer sk-mod');
    double.assertClean();
  });

  it('rejects flagged text, naming the categories; the configured model is sent', async () => {
    const guard = compileProviderAModeration({ model: 'text-moderation-latest', policies: { auth: { key: 'sk-mod' } } }, COMMON, services);
    const verdict = await guard.check(request('hello', 'I will attack you'), signal());
    assert.deepEqual(verdict, { action: 'reject', reason: 'flagged by moderation: violence' });
    assert.equal((double.calls.at(-1)!.json as { model: string }).model, 'text-moderation-latest');
    assert.equal(guard.failOpen, false);
    double.assertClean();
  });

  it('a key at a configured location (header without prefix)', async () => {
    const guard = compileProviderAModeration({ policies: { auth: { key: 'Bearer sk-mod', location: { header: { name: 'authorization' } } } } }, COMMON, services);
    assert.deepEqual(await guard.check(request('hi'), signal()), { action: 'pass' });
  });

  it('throws (the runner fails closed) on a wrong key, an outage, a malformed answer, or a timeout', async () => {
    const wrongKey = compileProviderAModeration({ policies: { auth: { key: 'sk-wrong' } } }, COMMON, services);
    await assert.rejects(Promise.resolve(wrongKey.check(request('hi'), signal())), /answered 401/);
    const guard = compileProviderAModeration({ policies: { auth: { key: 'sk-mod' }, http: { requestTimeoutMs: 200 } } }, COMMON, services);
    try {
      double.override(() => ({ status: 500, body: { error: { message: 'boom', type: 'server_error', param: null, code: null } } }));
      await assert.rejects(Promise.resolve(guard.check(request('hi'), signal())), /answered 500/);
      double.override(() => ({ status: 200, body: { id: 'modr-1', model: 'm' } }));
      await assert.rejects(Promise.resolve(guard.check(request('hi'), signal())), /without results/);
      double.override(() => ({ status: 200, body: { results: [] }, delayMs: 1000 }));
      await assert.rejects(Promise.resolve(guard.check(request('hi'), signal())), /no answer within 200 ms/);
      double.override(() => ({ status: 200, body: 'x'.repeat(200_000) }));
      await assert.rejects(Promise.resolve(guard.check(request('hi'), signal())), /larger than/);
    } finally {
      double.override(undefined);
    }
  });

  it('policies.tls and http.version reach the vendor through the shared connector (a private CA, SNI); without the CA the guard fails', async () => {
    const cert = await createCertificate(['moderation.test']);
    const secure = await startOpenAIModerationDouble('sk-mod', cert);
    try {
      const tlsServices = { ...services, vendorOrigins: { providerAModeration: secure.origin } };
      const trusted = compileProviderAModeration({ policies: { auth: { key: 'sk-mod' }, tls: { caCertificatePem: cert.certPem, sni: 'moderation.test' }, http: { version: 'HTTP1' } } }, COMMON, tlsServices);
      assert.deepEqual(await trusted.check(request('hi'), signal()), { action: 'pass' });
      assert.equal(secure.calls.length, 1);
      const untrusted = compileProviderAModeration({ policies: { auth: { key: 'sk-mod' }, tls: { sni: 'moderation.test' } } }, COMMON, tlsServices);
      await assert.rejects(Promise.resolve(untrusted.check(request('hi'), signal())), /certificate/);
      secure.assertClean();
    } finally {
      await secure.close();
    }
  });

  it('no text: passes without a call', async () => {
    const before = double.calls.length;
    const guard = compileProviderAModeration({ policies: { auth: { key: 'sk-mod' } } }, COMMON, services);
    assert.deepEqual(await guard.check(request(''), signal()), { action: 'pass' });
    assert.equal(double.calls.length, before);
  });
});
