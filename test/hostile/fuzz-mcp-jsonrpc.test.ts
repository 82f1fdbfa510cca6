/**
 * fast-check properties over a client's MCP JSON-RPC body, through the same `fuzz()` the
 * on-demand fuzzer runs (fuzz/mcp-jsonrpc.fuzz.ts): random bytes, random JSON, JSON-RPC-shaped
 * messages and batches with hostile params (deep nesting, long batches, odd ids, `_meta`
 * envelopes). Every call answers a message list or a documented refusal, never throws, and
 * returns fast.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { assertPrompt } from './fuzz-bound.ts';
import { fuzz } from '../../fuzz/mcp-jsonrpc.fuzz.ts';
import { MAX_BATCH_LENGTH, MAX_JSON_DEPTH, parseMessages } from '../../src/proxy/mcp/downstream/parse.ts';

function timed(data: Buffer): void {
  assertPrompt(() => fuzz(data), () => `${data.length} bytes`);
}

const id = fc.oneof(fc.integer(), fc.string({ maxLength: 8 }), fc.constant(null), fc.double(), fc.constant(undefined));
const method = fc.constantFrom('initialize', 'tools/list', 'tools/call', 'resources/read', 'prompts/get', 'notifications/initialized', '', 'x/y');
const deep = fc.nat({ max: 2 * MAX_JSON_DEPTH }).map((n) => JSON.parse('['.repeat(n + 1) + ']'.repeat(n + 1)) as unknown);
const meta = fc.record({ 'io.modelcontextprotocol/protocolVersion': fc.oneof(fc.constantFrom('2026-07-28', '2025-06-18'), fc.jsonValue()) }, { requiredKeys: [] });
const params = fc.oneof(fc.constant(undefined), fc.dictionary(fc.string({ maxLength: 6 }), fc.jsonValue({ maxDepth: 3 })), fc.record({ name: fc.string(), arguments: deep, _meta: meta }, { requiredKeys: [] }), fc.jsonValue());
const message = fc.record({ jsonrpc: fc.constantFrom('2.0', '1.0', 2), id, method, params, result: fc.option(fc.object(), { nil: undefined }) }, { requiredKeys: ['jsonrpc'] });
const body = fc.oneof(message, fc.array(message, { maxLength: MAX_BATCH_LENGTH + 5 })).map((v) => Buffer.from(JSON.stringify(v)));

describe('MCP JSON-RPC fuzz properties', () => {
  it('random bytes', () => {
    fc.assert(fc.property(fc.uint8Array({ maxLength: 512 }), (bytes) => timed(Buffer.from(bytes))), { numRuns: 1_000 });
  });

  it('random JSON', () => {
    fc.assert(fc.property(fc.jsonValue(), (value) => timed(Buffer.from(JSON.stringify(value) ?? 'null'))), { numRuns: 1_000 });
  });

  it('JSON-RPC-shaped messages and batches', () => {
    fc.assert(fc.property(body, (bytes) => timed(bytes)), { numRuns: 1_000 });
  });

  it('a 1 MiB-deep document is refused quickly, not parsed', () => {
    const depth = 512 * 1024;
    const bytes = Buffer.from('['.repeat(depth) + ']'.repeat(depth));
    const t0 = performance.now();
    const got = parseMessages(bytes);
    assert.ok(!got.ok && got.status === 400);
    timed(bytes);
    assert.ok(performance.now() - t0 < 1_000);
  });
});
