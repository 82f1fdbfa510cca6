import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { toErrorResponse, upstreamFailure, type ProxyError } from './errors.ts';

describe('toErrorResponse', () => {
  const cases: { error: ProxyError; status: number; code: string }[] = [
    { error: { code: 'ROUTE_NOT_FOUND' }, status: 404, code: 'route_not_found' },
    { error: { code: 'LISTENER_NOT_FOUND', host: 'x' }, status: 404, code: 'route_not_found' },
    { error: { code: 'MISDIRECTED_REQUEST', host: 'a', sni: 'b' }, status: 421, code: 'misdirected_request' },
    { error: { code: 'NO_VALID_BACKEND', rule: 'r' }, status: 500, code: 'no_valid_backend' },
    { error: { code: 'NO_HEALTHY_ENDPOINT', backend: 'b' }, status: 503, code: 'no_healthy_upstream' },
    { error: { code: 'UPSTREAM_CONNECT_FAILED', backend: 'b', cause: 'ECONNREFUSED' }, status: 502, code: 'upstream_connect_failed' },
    { error: { code: 'UPSTREAM_RESET', backend: 'b', cause: 'ECONNRESET' }, status: 502, code: 'upstream_reset' },
    { error: { code: 'REQUEST_TIMEOUT' }, status: 504, code: 'request_timeout' },
    { error: { code: 'BACKEND_TIMEOUT', backend: 'b' }, status: 504, code: 'upstream_timeout' },
    { error: { code: 'BAD_REQUEST', reason: 'bad target' }, status: 400, code: 'bad_request' },
    { error: { code: 'INTERNAL', cause: 'bug' }, status: 500, code: 'internal_error' },
  ];
  for (const c of cases) {
    it(`${c.error.code} → ${c.status}`, () => {
      const r = toErrorResponse(c.error);
      assert.equal(r.status, c.status);
      const body = JSON.parse(r.body) as { error: { code: string; message: string } };
      assert.equal(body.error.code, c.code);
      assert.ok(body.error.message.length > 0);
    });
  }

  it('never puts internal causes in the body', () => {
    assert.doesNotMatch(toErrorResponse({ code: 'INTERNAL', cause: 'stack at secret.ts' }).body, /secret/);
  });
});

describe('upstreamFailure', () => {
  const cases = [
    { code: 'ECONNREFUSED', want: 'UPSTREAM_CONNECT_FAILED' },
    { code: 'UND_ERR_CONNECT_TIMEOUT', want: 'UPSTREAM_CONNECT_FAILED' },
    { code: 'UND_ERR_HEADERS_TIMEOUT', want: 'BACKEND_TIMEOUT' },
    { code: 'UND_ERR_SOCKET', want: 'UPSTREAM_RESET' },
    { code: 'ECONNRESET', want: 'UPSTREAM_RESET' },
    { code: 'UND_ERR_INVALID_ARG', want: 'INTERNAL' },
  ];
  for (const c of cases) {
    it(`${c.code} → ${c.want}`, () => assert.equal(upstreamFailure('b', Object.assign(new Error('x'), { code: c.code })).code, c.want));
  }
});
