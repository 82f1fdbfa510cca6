/**
 * fast-check properties over AI route request planning, through the same `fuzz()` the on-demand
 * fuzzer runs (fuzz/llm-request.fuzz.ts): random bytes, and JSON shaped like chat, messages and
 * responses requests — odd types in every field, deep nesting, huge runs in text — each planned
 * for every route type and two providers, giving a plan or a 4xx answer, fast.
 */
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { assertPrompt } from './fuzz-bound.ts';
import { fuzz } from '../../fuzz/llm-request.fuzz.ts';
import { MAX_JSON_DEPTH } from '../../src/proxy/http/json-depth.ts';

function timed(data: Buffer): void {
  assertPrompt(() => fuzz(data), () => `${data.length} bytes`);
}

const anyValue = fc.oneof(fc.string(), fc.integer(), fc.boolean(), fc.constant(null), fc.array(fc.string(), { maxLength: 3 }), fc.dictionary(fc.string(), fc.string(), { maxKeys: 3 }));
const text = fc.oneof(fc.string({ maxLength: 50 }), fc.constantFrom('a'.repeat(5000), '中'.repeat(3000), ' '.repeat(4000), '<|endoftext|>'));
const deep = (d: number) => '['.repeat(d) + ']'.repeat(d);
const nested = fc.integer({ min: MAX_JSON_DEPTH - 2, max: MAX_JSON_DEPTH + 500 }).map((d) => JSON.parse(d <= MAX_JSON_DEPTH + 10 ? deep(d - 3) : '[]') as unknown);
const content = fc.oneof(text, fc.array(fc.record({ type: fc.constantFrom('text', 'image', 'image_url', 'tool_use', 'tool_result', 'input_text', 'thinking', 'x'), text, id: fc.string(), name: fc.string(), input: anyValue, content: fc.oneof(text, anyValue), image_url: anyValue, source: anyValue }, { requiredKeys: ['type'] }), { maxLength: 4 }), anyValue);
const message = fc.record({ role: fc.constantFrom('user', 'assistant', 'system', 'tool', 'developer', 'x'), content, tool_calls: fc.array(fc.record({ id: fc.string(), type: fc.constant('function'), function: fc.record({ name: fc.string(), arguments: fc.oneof(fc.string(), anyValue) }) }), { maxLength: 2 }), tool_call_id: fc.string() }, { requiredKeys: ['role'] });
const tool = fc.oneof(
  fc.record({ type: fc.constant('function'), function: fc.record({ name: fc.string(), parameters: fc.oneof(anyValue, nested) }) }),
  fc.record({ name: fc.string(), input_schema: fc.oneof(anyValue, nested), description: text }),
  anyValue,
);
const request = fc.record({
  model: fc.oneof(fc.constantFrom('gpt-4o', 'claude-x', ''), anyValue),
  messages: fc.oneof(fc.array(message, { maxLength: 4 }), anyValue, nested),
  system: fc.oneof(text, anyValue),
  input: fc.oneof(text, fc.array(message, { maxLength: 3 }), anyValue, nested),
  instructions: fc.oneof(text, anyValue),
  tools: fc.oneof(fc.array(tool, { maxLength: 3 }), anyValue),
  stream: fc.oneof(fc.boolean(), anyValue),
  max_tokens: fc.oneof(fc.integer(), anyValue),
  tool_choice: anyValue,
  response_format: anyValue,
}, { requiredKeys: [] });

describe('LLM request planning fuzz properties', () => {
  it('random bytes', () => {
    fc.assert(fc.property(fc.uint8Array({ maxLength: 256 }), (bytes) => timed(Buffer.from(bytes))), { numRuns: 300 });
  });

  it('JSON shaped like chat, messages and responses requests', () => {
    fc.assert(fc.property(request, (r) => timed(Buffer.from(JSON.stringify(r)))), { numRuns: 300 });
  });

  it('nesting past the depth limit anywhere in the body', () => {
    fc.assert(fc.property(fc.integer({ min: MAX_JSON_DEPTH - 5, max: 50_000 }), fc.constantFrom('messages', 'tools', 'input', 'model'), (depth, field) => {
      timed(Buffer.from(`{"model":"m","${field}":${deep(depth)}}`));
    }), { numRuns: 60 });
  });
});
