import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Part } from '../canonical.ts';
import { codePointOffset, joinText, RUN_SEPARATOR, utf16FromUtf8 } from './text-runs.ts';

describe('offset units', () => {
  // "é" is 2 UTF-8 bytes and 1 UTF-16 unit; "€" 3 bytes, 1 unit; "🏦" 4 bytes, 2 units, 1 character.
  const text = 'aé€🏦z';
  const cases = [
    { name: 'ASCII prefix', bytes: 1, utf16: 1, chars: 1 },
    { name: 'after a 2-byte character', bytes: 3, utf16: 2, chars: 2 },
    { name: 'after a 3-byte character', bytes: 6, utf16: 3, chars: 3 },
    { name: 'after a 4-byte character (surrogate pair)', bytes: 10, utf16: 5, chars: 4 },
    { name: 'end of text', bytes: 11, utf16: 6, chars: 5 },
    { name: 'past the end is clamped', bytes: 99, utf16: 6, chars: 5 },
  ];
  for (const c of cases) {
    it(c.name, () => {
      assert.equal(Buffer.byteLength(text.slice(0, Math.min(c.utf16, text.length))), Math.min(c.bytes, 11));
      assert.equal(utf16FromUtf8(text, c.bytes), c.utf16);
      assert.equal(codePointOffset(text, c.utf16), c.chars);
      assert.equal([...text.slice(0, c.utf16)].length, c.chars);
    });
  }
  it('continues from a known position', () => {
    assert.equal(utf16FromUtf8(text, 10, 2, 3), 5);
  });
});

describe('joining text parts into one string', () => {
  const t = (text: string, citations?: { url: string; start: number; end: number }[]): Part => (citations ? { type: 'text', text, citations } : { type: 'text', text });
  const search: Part = { type: 'web_search', id: 'ws_1', queries: ['q'] };
  const cases: { name: string; parts: Part[]; text: string; citations?: [number, number][] }[] = [
    { name: 'adjacent blocks keep their own spacing', parts: [t('Based on the results, '), t('rates are unchanged.')], text: 'Based on the results, rates are unchanged.' },
    { name: 'runs separated by a search get a separator', parts: [t('I will look.'), search, t('Rates are unchanged.')], text: `I will look.${RUN_SEPARATOR}Rates are unchanged.` },
    { name: 'runs separated by a tool call get a separator', parts: [t('Checking.'), { type: 'tool_call', id: 'c', name: 'f', arguments: '{}' }, t('Done.')], text: `Checking.${RUN_SEPARATOR}Done.` },
    { name: 'no separator when whitespace is already there', parts: [t('I will look.\n'), search, t('Rates.')], text: 'I will look.\nRates.' },
    { name: 'a bare signature does not split a run', parts: [t('Hello'), { type: 'thinking', text: '', signature: 's' }, t(' world')], text: 'Hello world' },
    { name: 'leading non-text content adds nothing', parts: [search, t('Answer.')], text: 'Answer.' },
    {
      name: 'citations shift with the separator', parts: [t('Look.'), search, t('Before, '), t('cited part.', [{ url: 'u', start: 0, end: 11 }])],
      text: `Look.${RUN_SEPARATOR}Before, cited part.`, citations: [[15, 26]],
    },
  ];
  for (const c of cases) {
    it(c.name, () => {
      const j = joinText(c.parts);
      assert.equal(j.text, c.text);
      assert.deepEqual(j.citations.map((x) => [x.start, x.end]), c.citations ?? []);
    });
  }
});
