import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { describe, it } from 'node:test';
import aws4 from 'aws4';
import type { BackendAuthPolicy } from '../../../ir/policy.ts';
import { BackendCredentials, CredentialError, CredentialRequestError, PLAIN_BACKEND, usesCloudCredentials, type CredentialRequest } from './backend-credentials.ts';
import { UNSIGNED_PAYLOAD } from './sigv4.ts';

const KEYS = { accessKeyId: 'AKIDEXAMPLE', secretAccessKey: 'wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY' };
const CLOUD_A: BackendAuthPolicy = { cloudA: { secret: { accessKey: KEYS.accessKeyId, secretKey: KEYS.secretAccessKey }, serviceName: 'execute-api', region: 'eu-west-1' } };

function proxied(headers: Record<string, string | string[]>, body: CredentialRequest['body'] = UNSIGNED_PAYLOAD): CredentialRequest {
  return { host: 'api.example', method: 'POST', path: '/v1/items?b=2&a=1', headers, body };
}

async function prepare(req: CredentialRequest, auth: BackendAuthPolicy) {
  return new BackendCredentials({ env: {} }).apply(req, auth, {}, undefined, PLAIN_BACKEND);
}

describe('BackendCredentials on proxied requests (PLAIN_BACKEND)', () => {
  it('signs host, content-type and x-amz-* only; the client\'s other headers pass unsigned and untouched', async () => {
    const out = await prepare(proxied({ 'content-type': 'text/plain', 'x-amz-meta-team': 'a', 'user-agent': 'curl', cookie: ['a=1', 'b=2'], authorization: 'Bearer client' }), CLOUD_A);
    const signed = /SignedHeaders=([^,]+)/.exec(String(out.headers.authorization))?.[1];
    assert.equal(signed, 'content-type;host;x-amz-content-sha256;x-amz-date;x-amz-meta-team');
    assert.deepEqual(out.headers.cookie, ['a=1', 'b=2']);
    assert.equal(out.headers['user-agent'], 'curl');
    assert.equal(out.headers['x-amz-content-sha256'], 'UNSIGNED-PAYLOAD');
    // The signature is the one the service computes over what is sent.
    const again = { host: 'api.example', method: 'POST', path: '/v1/items?b=2&a=1', service: 'execute-api', region: 'eu-west-1', headers: Object.fromEntries(String(signed).split(';').map((h) => [h, String(out.headers[h])])) };
    aws4.sign(again, KEYS);
    assert.equal((again.headers as Record<string, string>).Authorization, out.headers.authorization);
  });

  it('the client cannot choose the signing time, session token or payload hash', async () => {
    const out = await prepare(proxied({ 'x-amz-date': '20000101T000000Z', 'x-amz-security-token': 'stolen', 'x-amz-content-sha256': 'e3b0' }, Buffer.from('body')), CLOUD_A);
    assert.notEqual(out.headers['x-amz-date'], '20000101T000000Z');
    assert.equal(out.headers['x-amz-security-token'], undefined);
    assert.equal(out.headers['x-amz-content-sha256'], createHash('sha256').update('body').digest('hex'));
  });

  it('cloud bearer tokens and keys go to Authorization Bearer', async () => {
    assert.deepEqual((await prepare(proxied({}), { key: 'k' })).headers, { authorization: 'Bearer k' });
  });

  it('no cloud-A keys anywhere: CredentialError; no region: CredentialError', async () => {
    assert.throws(() => new BackendCredentials({ env: {} }).apply(proxied({}), { cloudA: { serviceName: 's', region: 'r' } }, {}, undefined, PLAIN_BACKEND), CredentialError);
    assert.throws(() => new BackendCredentials({ env: { AWS_ACCESS_KEY_ID: 'AKID', AWS_SECRET_ACCESS_KEY: 'x' } }).apply(proxied({}), { cloudA: { serviceName: 's' } }, {}, undefined, PLAIN_BACKEND), /region/);
  });

  it('an assumed-role session name the request cannot give: CredentialRequestError 403, STS not called', async () => {
    const auth: BackendAuthPolicy = { cloudA: { ...CLOUD_A.cloudA, assumeRole: { roleIdentifier: 'arn:aws:iam::123456789012:role/r', sessionNameExpression: 'request.headers["x-user"]' } } };
    await assert.rejects(Promise.resolve().then(() => new BackendCredentials({ env: { AWS_ENDPOINT_URL_STS: 'http://127.0.0.1:1' } }).apply(proxied({}), auth, {}, () => ({ request: { headers: {}, url: '/', method: 'POST', path: '/' } }) as never, PLAIN_BACKEND)),
      (e) => e instanceof CredentialRequestError && e.status === 403);
  });

  it('usesCloudCredentials', () => {
    assert.deepEqual([undefined, { key: 'k' }, CLOUD_A, { cloudB: {} }, { cloudC: {} }].map(usesCloudCredentials), [false, false, true, true, true]);
  });
});
