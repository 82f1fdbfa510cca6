import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { hasMarkedSignature, nativeMessagesSignatures, nativeResponsesSignatures } from './native-signatures.ts';

const turn = (...content: unknown[]) => [{ role: 'user', content: 'q' }, { role: 'assistant', content }, { role: 'user', content: 'more' }];

describe('hasMarkedSignature', () => {
  const rows = [
    { name: 'a marked signature', body: '{"signature":"sb:g:abc"}', want: true },
    { name: 'an unmarked signature', body: '{"signature":"EqQBCkYIBxgC"}', want: false },
    { name: 'the mark inside text, not at a string start', body: '{"text":"see sb:g: here"}', want: false },
    { name: 'no signature at all', body: '{"messages":[]}', want: false },
    { name: 'an empty signature', body: '{"type":"thinking","thinking":"t","signature":""}', want: true },
  ];
  for (const row of rows) it(row.name, () => assert.equal(hasMarkedSignature(Buffer.from(row.body)), row.want));
});

describe('nativeMessagesSignatures', () => {
  const rows: { name: string; messages: unknown; want: unknown }[] = [
    {
      name: 'an Anthropic-family mark is unwrapped',
      messages: turn({ type: 'thinking', thinking: 't', signature: 'sb:a:SIG' }, { type: 'text', text: 'x' }),
      want: turn({ type: 'thinking', thinking: 't', signature: 'SIG' }, { type: 'text', text: 'x' }),
    },
    {
      name: 'a Gemini-marked thinking block is dropped, the rest kept',
      messages: turn({ type: 'thinking', thinking: 't', signature: 'sb:g:SIG' }, { type: 'tool_use', id: 't1', name: 'f', input: {} }),
      want: turn({ type: 'tool_use', id: 't1', name: 'f', input: {} }),
    },
    {
      name: 'an OpenAI-marked thinking block is dropped',
      messages: turn({ type: 'thinking', thinking: 't', signature: 'sb:o:SIG' }, { type: 'text', text: 'x' }),
      want: turn({ type: 'text', text: 'x' }),
    },
    {
      name: 'thinking with an empty signature is dropped',
      messages: turn({ type: 'thinking', thinking: 't', signature: '' }, { type: 'text', text: 'x' }),
      want: turn({ type: 'text', text: 'x' }),
    },
    { name: 'unmarked signatures leave the messages alone', messages: turn({ type: 'thinking', thinking: 't', signature: 'SIG' }), want: undefined },
    { name: 'not an array', messages: 'nope', want: undefined },
  ];
  for (const row of rows) it(row.name, () => assert.deepEqual(nativeMessagesSignatures(row.messages), row.want));
});

describe('nativeResponsesSignatures', () => {
  const user = { role: 'user', content: 'q' };
  const rows: { name: string; input: unknown; want: unknown }[] = [
    {
      name: 'an OpenAI mark is unwrapped',
      input: [user, { type: 'reasoning', id: 'rs_1', summary: [], encrypted_content: 'sb:o:ENC' }],
      want: [user, { type: 'reasoning', id: 'rs_1', summary: [], encrypted_content: 'ENC' }],
    },
    {
      name: 'a reasoning item marked by another family is dropped whole',
      input: [user, { type: 'reasoning', id: 'rs_x', summary: [], encrypted_content: 'sb:a:SIG' }, { type: 'message', role: 'assistant', content: [] }],
      want: [user, { type: 'message', role: 'assistant', content: [] }],
    },
    { name: 'unmarked encrypted content is left alone', input: [user, { type: 'reasoning', id: 'rs_1', summary: [], encrypted_content: 'ENC' }], want: undefined },
    { name: 'a string input', input: 'hello', want: undefined },
  ];
  for (const row of rows) it(row.name, () => assert.deepEqual(nativeResponsesSignatures(row.input), row.want));
});
