import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { invocationHeaders, SESSION_HEADER } from './invocation-headers.ts';

describe('agent runtime invocation headers', () => {
  it('keeps a client session id, trace context and custom headers; drops framing, the client credential and signer headers', () => {
    const { headers, sessionId } = invocationHeaders({
      host: 'gw.example', 'content-length': '12', connection: 'keep-alive', authorization: 'Bearer client-key', cookie: 'a=b',
      'x-amz-date': '20200101T000000Z', 'x-amz-security-token': 'forged', [SESSION_HEADER]: 'session-0123456789-0123456789-0123456789',
      traceparent: '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01', 'x-amzn-bedrock-agentcore-runtime-custom-tenant': 't1', 'content-type': 'application/json',
    }, true);
    assert.equal(sessionId, 'session-0123456789-0123456789-0123456789');
    assert.deepEqual(headers, {
      [SESSION_HEADER]: 'session-0123456789-0123456789-0123456789', traceparent: '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01',
      'x-amzn-bedrock-agentcore-runtime-custom-tenant': 't1', 'content-type': 'application/json',
    });
  });

  it('generates a session id when the client has none; a payload without a type is application/octet-stream', () => {
    const { headers, sessionId } = invocationHeaders({}, true, () => 'generated-0123456789-0123456789-0123');
    assert.equal(sessionId, 'generated-0123456789-0123456789-0123');
    assert.equal(headers[SESSION_HEADER], sessionId);
    assert.equal(headers['content-type'], 'application/octet-stream');
  });

  it('a bodiless invocation gets no content type', () => {
    assert.equal(invocationHeaders({}, false).headers['content-type'], undefined);
  });
});
