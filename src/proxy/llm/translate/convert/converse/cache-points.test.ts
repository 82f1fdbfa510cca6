import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { ConverseRequest } from '../../formats/bedrock.ts';
import { applyCachePoints } from './cache-points.ts';

const CP = { cachePoint: { type: 'default' } };
const long = 'word '.repeat(1000);
const body: ConverseRequest = {
  system: [{ text: long }],
  messages: [
    { role: 'user', content: [{ text: 'q1' }] },
    { role: 'assistant', content: [{ text: 'a1' }] },
    { role: 'user', content: [{ text: 'q2' }] },
  ],
  toolConfig: { tools: [{ toolSpec: { name: 't', inputSchema: { json: {} } } }] },
};
const claude = 'us.anthropic.claude-3-7-sonnet-20250219-v1:0';

describe('applyCachePoints', () => {
  it('defaults: system and the second-to-last message, not tools', () => {
    const out = applyCachePoints(body, {}, claude);
    assert.deepEqual(out.system, [{ text: long }, CP]);
    assert.deepEqual(out.messages.map((m) => m.content.length), [1, 2, 1]);
    assert.equal(out.toolConfig?.tools.length, 1);
  });

  it('offset moves the message cache point toward the start, clamped', () => {
    assert.deepEqual(applyCachePoints(body, { cacheMessageOffset: 1 }, claude).messages.map((m) => m.content.length), [2, 1, 1]);
    assert.deepEqual(applyCachePoints(body, { cacheMessageOffset: 9 }, claude).messages.map((m) => m.content.length), [2, 1, 1]);
  });

  it('tools on request; nothing below minTokens or for unsupported families', () => {
    assert.equal(applyCachePoints(body, { cacheTools: true }, claude).toolConfig?.tools.length, 2);
    assert.equal(applyCachePoints(body, { minTokens: 100000 }, claude), body);
    assert.equal(applyCachePoints(body, {}, 'meta.llama3-70b-instruct-v1:0'), body);
  });
});
