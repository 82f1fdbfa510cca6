import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { renderGatewayError, type ClientFormat } from './error-format.ts';

const limited = { code: 'rate_limited', message: 'rate limit exceeded' };
const unauthorized = { code: 'unauthorized', message: 'an API key is required' };
const timeout = { code: 'request_timeout', message: 'the request timed out' };

const rows: { name: string; status: number; error: typeof limited; format: ClientFormat; body: unknown }[] = [
  { name: '429 gateway', status: 429, error: limited, format: 'gateway', body: { error: limited } },
  { name: '429 openai', status: 429, error: limited, format: 'openai', body: { error: { message: 'rate limit exceeded', type: 'rate_limit_error', param: null, code: 'rate_limited' } } },
  { name: '429 anthropic', status: 429, error: limited, format: 'anthropic', body: { type: 'error', error: { type: 'rate_limit_error', message: 'rate limit exceeded' } } },
  { name: '429 jsonrpc', status: 429, error: limited, format: 'jsonrpc', body: { jsonrpc: '2.0', id: null, error: { code: -32001, message: 'rate limit exceeded', data: { status: 429, code: 'rate_limited' } } } },
  { name: '401 openai', status: 401, error: unauthorized, format: 'openai', body: { error: { message: 'an API key is required', type: 'authentication_error', param: null, code: 'unauthorized' } } },
  { name: '401 anthropic', status: 401, error: unauthorized, format: 'anthropic', body: { type: 'error', error: { type: 'authentication_error', message: 'an API key is required' } } },
  { name: '504 openai', status: 504, error: timeout, format: 'openai', body: { error: { message: 'the request timed out', type: 'server_error', param: null, code: 'request_timeout' } } },
  { name: '504 anthropic', status: 504, error: timeout, format: 'anthropic', body: { type: 'error', error: { type: 'api_error', message: 'the request timed out' } } },
  { name: '504 jsonrpc', status: 504, error: timeout, format: 'jsonrpc', body: { jsonrpc: '2.0', id: null, error: { code: -32603, message: 'the request timed out', data: { status: 504, code: 'request_timeout' } } } },
  { name: '413 anthropic', status: 413, error: { code: 'payload_too_large', message: 'too big' }, format: 'anthropic', body: { type: 'error', error: { type: 'request_too_large', message: 'too big' } } },
  { name: '413 jsonrpc', status: 413, error: { code: 'payload_too_large', message: 'too big' }, format: 'jsonrpc', body: { jsonrpc: '2.0', id: null, error: { code: -32600, message: 'too big', data: { status: 413, code: 'payload_too_large' } } } },
];

describe('renderGatewayError', () => {
  for (const row of rows) {
    it(row.name, () => assert.deepEqual(JSON.parse(renderGatewayError(row.status, row.error, row.format)), row.body));
  }
});
