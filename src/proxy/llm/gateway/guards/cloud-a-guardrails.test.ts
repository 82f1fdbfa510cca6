import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { BackendCredentials } from '../../../policies/credentials/backend-credentials.ts';
import { AWS_KEYS } from '../../../../../test/llm/fake-cloud.ts';
import { startFakeSts } from '../../../../../test/llm/fake-sts.ts';
import { startBedrockGuardrailDouble } from '../../../../../test/llm/guards/bedrock-guardrail-double.ts';
import type { GuardDouble } from '../../../../../test/llm/guards/double.ts';
import { compileCloudAGuardrails, type CloudAGuardrailsGuardIR } from './cloud-a-guardrails.ts';
import type { GuardInput, GuardPhase } from './types.ts';

const COMMON = { rejectStatus: 403, rejectMessage: 'The request was rejected due to inappropriate content' };
const input = (phase: GuardPhase, ...texts: string[]): GuardInput => ({ phase, segments: texts.map((text) => ({ role: phase === 'request' ? 'user' : 'assistant', text })), headers: {}, streaming: false });
const signal = () => new AbortController().signal;
const ARN = 'arn:aws:bedrock:eu-west-1:123456789012:guardrail/gr-abc';

describe('cloudAGuardrails guard against a double of ApplyGuardrail', () => {
  let double: GuardDouble;
  const envKeys = new BackendCredentials({ env: { AWS_ACCESS_KEY_ID: AWS_KEYS.accessKeyId, AWS_SECRET_ACCESS_KEY: AWS_KEYS.secretAccessKey } });
  const noKeys = new BackendCredentials({ env: {} });
  let origins: { cloudAGuardrails: string };
  const config: CloudAGuardrailsGuardIR = { identifier: ARN, version: '3', region: 'eu-west-1' };
  before(async () => {
    double = await startBedrockGuardrailDouble({ identifier: ARN, version: '3', region: 'eu-west-1', keys: { [AWS_KEYS.accessKeyId]: AWS_KEYS.secretAccessKey }, apiKey: 'bedrock-api-key' });
    origins = { cloudAGuardrails: double.origin };
  });
  after(() => double.close());

  it('NONE passes; the request is signed for bedrock in the region with the default chain, each segment one block, source INPUT', async () => {
    const guard = compileCloudAGuardrails(config, COMMON, { credentials: envKeys, vendorOrigins: origins });
    assert.deepEqual(await guard.check(input('request', 'hello', '', 'how are you'), signal()), { action: 'pass' });
    const call = double.calls.at(-1)!;
    assert.equal(call.path, `/guardrail/${encodeURIComponent(ARN)}/version/3/apply`);
    assert.deepEqual(call.json, { source: 'INPUT', content: [{ text: { text: 'hello' } }, { text: { text: 'how are you' } }] });
    assert.match(String(call.headers.authorization), /^AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE\/\d{8}\/eu-west-1\/bedrock\/aws4_request/);
    double.assertClean();
  });

  it('a BLOCKED topic rejects with the action reason; answers are sent as OUTPUT', async () => {
    const guard = compileCloudAGuardrails(config, COMMON, { credentials: envKeys, vendorOrigins: origins });
    assert.deepEqual(await guard.check(input('response', 'Here is some investment advice'), signal()), { action: 'reject', reason: 'Guardrail blocked (OUTPUT).' });
    assert.equal((double.calls.at(-1)!.json as { source: string }).source, 'OUTPUT');
    double.assertClean();
  });

  it('ANONYMIZED only: the outputs are the masked segments, skipped empty ones kept in place', async () => {
    const guard = compileCloudAGuardrails(config, COMMON, { credentials: envKeys, vendorOrigins: origins });
    const verdict = await guard.check(input('request', 'my ssn is 123-45-6789', '', 'and hers 987-65-4321'), signal());
    assert.deepEqual(verdict, { action: 'mask', segments: ['my ssn is {US_SOCIAL_SECURITY_NUMBER}', '', 'and hers {US_SOCIAL_SECURITY_NUMBER}'] });
    double.assertClean();
  });

  it('credential forms: keys from auth.cloudA.secret; a Bedrock API key as bearer (no signing)', async () => {
    const fromSecret = compileCloudAGuardrails({ ...config, policies: { auth: { cloudA: { secret: { accessKey: AWS_KEYS.accessKeyId, secretKey: AWS_KEYS.secretAccessKey } } } } }, COMMON, { credentials: noKeys, vendorOrigins: origins });
    assert.deepEqual(await fromSecret.check(input('request', 'hi'), signal()), { action: 'pass' });
    const byKey = compileCloudAGuardrails({ ...config, policies: { auth: { key: 'bedrock-api-key' } } }, COMMON, { credentials: noKeys, vendorOrigins: origins });
    assert.deepEqual(await byKey.check(input('request', 'hi'), signal()), { action: 'pass' });
    assert.equal(double.calls.at(-1)!.headers.authorization, 'Bearer bedrock-api-key');
    double.assertClean();
  });

  it('credential forms: an assumed role (STS session signed with the Secret keys, then the session signs the call)', async () => {
    const sts = await startFakeSts({ [AWS_KEYS.accessKeyId]: AWS_KEYS.secretAccessKey }, 'eu-west-1');
    const withSessions = await startBedrockGuardrailDouble({ identifier: ARN, version: '3', region: 'eu-west-1', sts });
    try {
      const credentials = new BackendCredentials({ env: { AWS_ENDPOINT_URL_STS: sts.url } });
      const roleArn = 'arn:aws:iam::123456789012:role/guardrails';
      const guard = compileCloudAGuardrails({ ...config, policies: { auth: { cloudA: { secret: { accessKey: AWS_KEYS.accessKeyId, secretKey: AWS_KEYS.secretAccessKey }, assumeRole: { roleIdentifier: roleArn } } } } }, COMMON, { credentials, vendorOrigins: { cloudAGuardrails: withSessions.origin } });
      assert.deepEqual(await guard.check(input('request', 'hi'), signal()), { action: 'pass' });
      assert.equal(sts.calls.length, 1);
      assert.equal(sts.calls[0]!.form.get('RoleArn'), roleArn);
      const token = withSessions.calls.at(-1)!.headers['x-amz-security-token'];
      assert.equal([...sts.issued.values()].some((s) => s.sessionToken === token), true, 'the call is signed with the issued session');
      withSessions.assertClean();
    } finally {
      await withSessions.close();
      await sts.stop();
    }
  });

  it('no usable credential, a wrong signature, or an unknown guardrail throw (FailClosed)', async () => {
    const none = compileCloudAGuardrails(config, COMMON, { credentials: noKeys, vendorOrigins: origins });
    await assert.rejects(Promise.resolve(none.check(input('request', 'hi'), signal())), /no credential: no cloud-A credentials/);
    const wrong = compileCloudAGuardrails({ ...config, policies: { auth: { cloudA: { secret: { accessKey: AWS_KEYS.accessKeyId, secretKey: 'not-the-key' } } } } }, COMMON, { credentials: noKeys, vendorOrigins: origins });
    await assert.rejects(Promise.resolve(wrong.check(input('request', 'hi'), signal())), /answered 403/);
    const unknown = compileCloudAGuardrails({ ...config, version: '9' }, COMMON, { credentials: envKeys, vendorOrigins: origins });
    await assert.rejects(Promise.resolve(unknown.check(input('request', 'hi'), signal())), /answered 404/);
    assert.equal(none.failOpen, false);
  });

  it('an anonymization whose outputs do not match the blocks, or an unknown action, throws', async () => {
    const guard = compileCloudAGuardrails(config, COMMON, { credentials: envKeys, vendorOrigins: origins });
    try {
      double.override(() => ({ status: 200, body: { action: 'GUARDRAIL_INTERVENED', outputs: [{ text: 'x' }], assessments: [{ sensitiveInformationPolicy: { piiEntities: [{ match: 'a', type: 'EMAIL', action: 'ANONYMIZED', detected: true }] } }] } }));
      await assert.rejects(Promise.resolve(guard.check(input('request', 'a', 'b'), signal())), /1 outputs for 2 content blocks/);
      double.override(() => ({ status: 200, body: { action: 'MAYBE' } }));
      await assert.rejects(Promise.resolve(guard.check(input('request', 'a'), signal())), /without action/);
    } finally {
      double.override(undefined);
    }
  });
});
