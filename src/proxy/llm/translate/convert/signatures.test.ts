import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { SignatureFamily } from '../canonical.ts';
import { markSignature, readSignature, replayableSignature } from './signatures.ts';

const FAMILIES: SignatureFamily[] = ['anthropic', 'gemini', 'openai'];

describe('signature marks', () => {
  const cases: { name: string; family: SignatureFamily | undefined; native: SignatureFamily | undefined; out: string }[] = [
    { name: 'Anthropic signature to a Messages client stays as it is', family: 'anthropic', native: 'anthropic', out: 'EqQB==' },
    { name: 'Anthropic signature to a chat client is marked', family: 'anthropic', native: undefined, out: 'sb:a:EqQB==' },
    { name: 'Gemini signature to a Messages client is marked', family: 'gemini', native: 'anthropic', out: 'sb:g:EqQB==' },
    { name: 'OpenAI encrypted content to a Responses client stays as it is', family: 'openai', native: 'openai', out: 'EqQB==' },
    { name: 'Anthropic signature to a Responses client is marked', family: 'anthropic', native: 'openai', out: 'sb:a:EqQB==' },
    { name: 'unknown family is never marked', family: undefined, native: undefined, out: 'EqQB==' },
  ];
  for (const c of cases) it(c.name, () => assert.equal(markSignature('EqQB==', c.family, c.native), c.out));

  for (const family of FAMILIES) {
    for (const presumed of FAMILIES) {
      it(`a ${family} mark is read back whatever the field's own family (${presumed})`, () => {
        assert.deepEqual(readSignature(markSignature('abc/+=', family, undefined), presumed), { signature: 'abc/+=', family });
      });
    }
  }
  const unmarked = [
    { name: 'a plain base64 signature', raw: 'EqQBCgIYAhIM' },
    { name: 'an unknown family letter', raw: 'sb:x:abc' },
    { name: 'a bare prefix', raw: 'sb:a:' },
    { name: 'Gemini\'s placeholder', raw: 'skip_thought_signature_validator' },
  ];
  for (const c of unmarked) it(`${c.name} is taken as the field's own family`, () => assert.deepEqual(readSignature(c.raw, 'gemini'), { signature: c.raw, family: 'gemini' }));
});

describe('replaying a signature to a target family', () => {
  for (const family of FAMILIES) {
    for (const target of FAMILIES) {
      it(`${family} signature to a ${target} upstream: ${family === target ? 'replayed' : 'dropped'}`, () => {
        assert.equal(replayableSignature({ type: 'thinking', text: 't', signature: 's', family }, target), family === target ? 's' : undefined);
      });
    }
  }
  it('a signature of unknown family is forwarded as before', () => {
    assert.equal(replayableSignature({ type: 'thinking', text: 't', signature: 's' }, 'gemini'), 's');
  });
});
