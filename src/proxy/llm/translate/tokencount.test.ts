import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { countTokens } from 'gpt-tokenizer';
import { estimateInputTokens, TokenTally } from './tokencount.ts';
import { CHUNK_CHARS, forEachPiece, MAX_PIECE_CHARS } from './token-pieces.ts';

const whole = (s: string) => countTokens(s, { disallowedSpecial: new Set() });
const tally = (s: string, budget?: number) => {
  const t = new TokenTally(budget);
  t.add(s);
  return t;
};

describe('token counting with a cost bound', () => {
  const exactRows: [string, string][] = [
    ['prose', 'The quick brown fox jumps over the lazy dog, and then it said: "Hello, world!" Don\'t panic.\n'.repeat(300)],
    ['JSON schema without spaces', JSON.stringify({ type: 'object', properties: { location: { type: 'string', description: 'City, e.g. Paris' }, unit: { enum: ['c', 'f'] } } }).repeat(40)],
    ['code', 'function fooBar(baz) {\n  return baz.map((x) => x * 2); // https://example.com/a/b?c=d\n}\n'.repeat(100)],
    ['several scripts', 'Grüße aus München! 你好，世界。 Привет мир 😀👍 naïve café\n'.repeat(100)],
    ['a long URL', 'see https://example.com/some/really/long/path/segment/that/keeps/going/and/going?with=query#frag ok'],
    ['special tokens as text', 'before <|endoftext|> after <|im_start|>'],
    ['whitespace runs', 'a  \t b\n\n\n   c    '],
  ];
  for (const [name, text] of exactRows) {
    it(`counts ${name} exactly as one tokenizer call does`, () => {
      assert.equal(tally(text).tokens, whole(text));
      assert.equal(tally(text).estimated, false);
    });
  }

  it('cuts every stretch without a boundary at MAX_PIECE_CHARS and chunks at about CHUNK_CHARS', () => {
    for (const text of ['a'.repeat(10_000), '😀'.repeat(3000), 'x y '.repeat(5000)]) {
      let at = 0;
      forEachPiece(text, (p) => {
        assert.equal(p.start, at);
        assert.ok(p.end - p.start <= CHUNK_CHARS + MAX_PIECE_CHARS);
        at = p.end;
        return true;
      });
      assert.equal(at, text.length);
    }
  });

  it('never splits a surrogate pair', () => {
    forEachPiece('😀'.repeat(1000), (p) => {
      assert.ok(p.start % 2 === 0 && p.end % 2 === 0, `cut at ${p.start}..${p.end}`);
      return true;
    });
  });

  const hostileRows: [string, string][] = [
    ['1.9 MB of one character', 'a'.repeat(1_900_000)],
    ['1.9 MB of spaces', ' '.repeat(1_900_000)],
    ['1.9 MB of CJK', '中文字'.repeat(630_000)],
  ];
  for (const [name, text] of hostileRows) {
    it(`counts ${name} promptly with an estimate`, () => {
      const t0 = performance.now();
      const t = tally(text);
      const ms = performance.now() - t0;
      assert.ok(ms < 1500, `took ${ms.toFixed(0)} ms`);
      assert.equal(t.estimated, true);
      assert.ok(t.tokens > 0);
    });
  }

  it('extrapolates past the budget from the ratio of what was counted exactly', () => {
    const prose = 'The quick brown fox jumps over the lazy dog, again and again.\n'.repeat(2000);
    const t = tally(prose, 10_000);
    assert.equal(t.estimated, true);
    const exact = whole(prose);
    assert.ok(Math.abs(t.tokens - exact) / exact < 0.02, `${t.tokens} vs ${exact}`);
  });

  it('estimateInputTokens keeps the chat framing overhead', () => {
    const n = estimateInputTokens({ model: 'm', system: [{ text: 'be brief' }], messages: [{ role: 'user', parts: [{ type: 'text', text: 'hello there' }] }] } as never);
    assert.equal(n, 3 + 3 + whole('be brief') + 3 + whole('hello there'));
  });
});
