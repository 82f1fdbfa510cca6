import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { BackendCredentials } from '../../../policies/credentials/backend-credentials.ts';
import { compilePromptGuard, GuardConfigError } from './compile.ts';
import { setGuardServicesForTests } from './remote-kinds.ts';
import type { GuardInput } from './types.ts';

const input: GuardInput = { phase: 'request', segments: [{ role: 'user', text: 'hi' }], headers: {}, streaming: false };

describe('remote guard kinds as the guard compiler sees them', () => {
  setGuardServicesForTests({ credentials: new BackendCredentials({ env: {} }) });
  after(() => setGuardServicesForTests(undefined));

  it('each kind compiles from its lowered block, with the entry\'s response', () => {
    const compiled = compilePromptGuard({
      request: [
        { webhook: { backendKey: 'service/default/hook:80', url: 'http://127.0.0.1:1' }, response: { statusCode: 451, message: 'no' } },
        { providerAModeration: { policies: { auth: { key: 'k' } } } },
        { cloudAGuardrails: { identifier: 'g', version: '1', region: 'eu-west-1' } },
        { cloudCShield: { templateId: 't', projectId: 'p' } },
      ],
    })!;
    assert.deepEqual(compiled.request.map((g) => g.kind), ['webhook', 'providerAModeration', 'cloudAGuardrails', 'cloudCShield']);
    assert.equal(compiled.request[0]!.rejectStatus, 451);
    assert.equal(compiled.request[1]!.rejectMessage, 'The request was rejected due to inappropriate content');
  });

  it('a block in its written form (Secret reference, unresolved backendRef) does not compile: requests fail closed', () => {
    assert.throws(() => compilePromptGuard({ request: [{ providerAModeration: { policies: { auth: { secretRef: { name: 'k' } } } } }] }), GuardConfigError);
    assert.throws(() => compilePromptGuard({ request: [{ cloudAGuardrails: { identifier: 'g', version: '1', region: 'r', policies: { auth: { cloudA: { secretRef: { name: 'aws' } } } } } }] }), GuardConfigError);
    assert.throws(() => compilePromptGuard({ request: [{ webhook: { backendRef: { name: 'hook', port: 80 } } }] }), /backendRef was not resolved/);
  });

  it('a webhook backend with no ready endpoint compiles to a guard whose calls fail, so failureMode decides', async () => {
    const [open, closed] = compilePromptGuard({ request: [
      { webhook: { backendKey: 'service/default/hook:80', failureMode: 'FailOpen' } },
      { webhook: { backendKey: 'service/default/hook:80' } },
    ] })!.request;
    assert.equal(open!.failOpen, true);
    assert.equal(closed!.failOpen, false);
    await assert.rejects(Promise.resolve(closed!.check(input, new AbortController().signal)), /no ready endpoint/);
  });
});
