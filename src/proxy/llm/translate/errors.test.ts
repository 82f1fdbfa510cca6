import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { errorBody, parseUpstreamError } from './errors.ts';

const enc = (v: unknown) => Buffer.from(JSON.stringify(v));

describe('parseUpstreamError', () => {
  const cases = [
    { name: 'OpenAI', status: 400, body: { error: { message: 'bad', type: 'invalid_request_error', param: 'x', code: 'c1' } }, want: { status: 400, message: 'bad', type: 'invalid_request_error', code: 'c1' } },
    { name: 'Anthropic', status: 529, body: { type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } }, want: { status: 529, message: 'Overloaded', type: 'overloaded_error', code: null } },
    { name: 'Google', status: 429, body: { error: { code: 429, message: 'quota', status: 'RESOURCE_EXHAUSTED' } }, want: { status: 429, message: 'quota', type: undefined, code: 'RESOURCE_EXHAUSTED' } },
    { name: 'Google array', status: 400, body: [{ error: { code: 400, message: 'arr', status: 'INVALID_ARGUMENT' } }], want: { status: 400, message: 'arr', type: undefined, code: 'INVALID_ARGUMENT' } },
  ];
  for (const c of cases) it(c.name, () => assert.deepEqual(parseUpstreamError(c.status, enc(c.body)), c.want));

  it('Bedrock takes the type from x-amzn-errortype', () => {
    const e = parseUpstreamError(403, enc({ message: 'denied' }), { 'x-amzn-errortype': 'AccessDeniedException:http://internal' });
    assert.deepEqual(e, { status: 403, message: 'denied', type: undefined, code: 'AccessDeniedException' });
  });

  it('a non-JSON body keeps its text', () => {
    assert.equal(parseUpstreamError(502, Buffer.from('<html>Bad gateway</html>')).message, '<html>Bad gateway</html>');
  });
});

describe('errorBody', () => {
  it('renders the OpenAI shape with a status-derived type', () => {
    assert.deepEqual(errorBody({ status: 429, message: 'slow down' }, 'openai'), { error: { message: 'slow down', type: 'rate_limit_error', param: null, code: null } });
  });
  it('renders the Anthropic shape and never an unknown type', () => {
    assert.deepEqual(errorBody({ status: 503, message: 'x', type: 'server_error' }, 'anthropic'), { type: 'error', error: { type: 'overloaded_error', message: 'x' } });
    assert.deepEqual(errorBody({ status: 400, message: 'y' }, 'anthropic'), { type: 'error', error: { type: 'invalid_request_error', message: 'y' } });
  });
});
