import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createActivation, compile, attributeValue } from '../../../cel/index.ts';
import { clientBodyFacts, llmInput, type LlmFacts } from './llm-cel.ts';

describe('llm CEL variables by phase', () => {
  const rows: { name: string; facts: LlmFacts; expression: string; want: unknown }[] = [
    { name: 'request phase: the model the client asked for', facts: { provider: 'openai', ...clientBodyFacts({ model: 'gpt-4o', stream: true }) }, expression: 'llm.requestModel', want: 'gpt-4o' },
    { name: 'request phase: stream true is streaming', facts: { provider: 'openai', ...clientBodyFacts({ model: 'gpt-4o', stream: true }) }, expression: 'llm.streaming', want: true },
    { name: 'request phase: no stream field is not streaming', facts: { provider: 'openai', ...clientBodyFacts({ model: 'gpt-4o' }) }, expression: 'llm.streaming', want: false },
    { name: 'request phase: a non-string model is not a model', facts: { provider: 'openai', ...clientBodyFacts({ model: 7 }) }, expression: 'has(llm.requestModel)', want: false },
    { name: 'planned phase: the provider name', facts: { provider: 'primary', requestModel: 'claude-x', streaming: false }, expression: 'llm.provider + "/" + llm.requestModel', want: 'primary/claude-x' },
    { name: 'answer phase: response model and tokens', facts: { provider: 'p', requestModel: 'gpt-4o', responseModel: 'gpt-4o-2024-08-06', usage: { inputTokens: 11, outputTokens: 2, totalTokens: 13 } }, expression: 'llm.responseModel + ":" + string(llm.totalTokens)', want: 'gpt-4o-2024-08-06:13' },
    { name: 'before the answer: no response model yet', facts: { provider: 'p', requestModel: 'gpt-4o' }, expression: 'has(llm.responseModel)', want: false },
  ];
  for (const row of rows) {
    it(row.name, () => {
      const compiled = compile(row.expression);
      assert.ok(compiled.ok);
      assert.deepEqual(attributeValue(compiled.program, createActivation({ llm: llmInput(row.facts) })), row.want);
    });
  }
});
