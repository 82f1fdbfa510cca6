import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ErrorCode } from '../jsonrpc.ts';
import { MAX_BATCH_LENGTH, MAX_JSON_DEPTH, MAX_MESSAGE_BYTES, parseMessages } from './parse.ts';

const request = (id: number) => ({ jsonrpc: '2.0', id, method: 'tools/list' });
const parse = (text: string) => parseMessages(Buffer.from(text));

describe('parseMessages', () => {
  const rows: readonly { name: string; body: string; status?: number; code?: number; messages?: number; batch?: boolean }[] = [
    { name: 'one request', body: JSON.stringify(request(1)), messages: 1, batch: false },
    { name: 'a batch', body: JSON.stringify([request(1), request(2)]), messages: 2, batch: true },
    { name: 'a batch of the maximum length', body: JSON.stringify(Array.from({ length: MAX_BATCH_LENGTH }, (_, i) => request(i))), messages: MAX_BATCH_LENGTH, batch: true },
    { name: 'a batch one longer', body: JSON.stringify(Array.from({ length: MAX_BATCH_LENGTH + 1 }, (_, i) => request(i))), status: 400, code: ErrorCode.InvalidRequest },
    { name: 'not JSON', body: '{"jsonrpc":', status: 400, code: ErrorCode.ParseError },
    { name: 'empty body', body: '', status: 400, code: ErrorCode.ParseError },
    { name: 'empty batch', body: '[]', status: 400, code: ErrorCode.InvalidRequest },
    { name: 'not a message', body: '{"hello":1}', status: 400, code: ErrorCode.InvalidRequest },
    { name: 'a scalar', body: '42', status: 400, code: ErrorCode.InvalidRequest },
    { name: 'params nested at the limit', body: JSON.stringify({ ...request(1), params: { a: JSON.parse('['.repeat(MAX_JSON_DEPTH - 2) + ']'.repeat(MAX_JSON_DEPTH - 2)) as unknown } }), messages: 1 },
    { name: 'params nested one deeper', body: JSON.stringify({ ...request(1), params: { a: JSON.parse('['.repeat(MAX_JSON_DEPTH - 1) + ']'.repeat(MAX_JSON_DEPTH - 1)) as unknown } }), status: 400, code: ErrorCode.InvalidRequest },
    { name: '100k-deep array', body: '['.repeat(100_000) + ']'.repeat(100_000), status: 400, code: ErrorCode.InvalidRequest },
    { name: 'brackets inside strings do not count', body: JSON.stringify({ ...request(1), params: { s: '[{'.repeat(1000) + '\\"' } }), messages: 1 },
  ];
  for (const row of rows) {
    it(row.name, () => {
      const got = parse(row.body);
      if (row.messages !== undefined) {
        assert.ok(got.ok, JSON.stringify(got));
        assert.equal(got.messages.length, row.messages);
        if (row.batch !== undefined) assert.equal(got.batch, row.batch);
      } else {
        assert.ok(!got.ok);
        assert.equal(got.status, row.status);
        assert.equal(got.code, row.code);
      }
    });
  }

  it('a body over MAX_MESSAGE_BYTES is 413', () => {
    const got = parseMessages(Buffer.alloc(MAX_MESSAGE_BYTES + 1, 0x20));
    assert.ok(!got.ok);
    assert.equal(got.status, 413);
  });
});
