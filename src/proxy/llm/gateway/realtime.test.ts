import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { responseDoneUsage } from './realtime.ts';

describe('responseDoneUsage', () => {
  const cases = [
    {
      name: 'response.done with usage and cached input tokens',
      text: JSON.stringify({ type: 'response.done', event_id: 'e1', response: { id: 'r1', status: 'completed', usage: { total_tokens: 57, input_tokens: 40, output_tokens: 17, input_token_details: { cached_tokens: 8, text_tokens: 30, audio_tokens: 10 } } } }),
      expect: { inputTokens: 40, outputTokens: 17, totalTokens: 57, cachedInputTokens: 8 },
    },
    {
      name: 'response.done without usage (cancelled response)',
      text: JSON.stringify({ type: 'response.done', response: { id: 'r2', status: 'cancelled', usage: null } }),
      expect: undefined,
    },
    {
      name: 'another event that mentions response.done in its text',
      text: JSON.stringify({ type: 'response.output_text.delta', delta: 'say "response.done"', response: { usage: { input_tokens: 1 } } }),
      expect: undefined,
    },
    { name: 'an audio delta is not parsed', text: '{"type":"response.output_audio.delta","delta":"AAAA"}', expect: undefined },
    { name: 'not JSON', text: '"response.done" {', expect: undefined },
  ];
  for (const c of cases) it(c.name, () => assert.deepEqual(responseDoneUsage(c.text), c.expect));
});
