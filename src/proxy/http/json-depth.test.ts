import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { jsonTooDeep, MAX_JSON_DEPTH } from './json-depth.ts';

const deep = (n: number) => '['.repeat(n) + ']'.repeat(n);

describe('jsonTooDeep', () => {
  const rows: [string, string, boolean][] = [
    ['a flat object', '{"a":1,"b":[1,2,3]}', false],
    ['exactly the limit', deep(MAX_JSON_DEPTH), false],
    ['one past the limit', deep(MAX_JSON_DEPTH + 1), true],
    ['objects past the limit', '{"a":'.repeat(MAX_JSON_DEPTH + 1) + '1' + '}'.repeat(MAX_JSON_DEPTH + 1), true],
    ['brackets inside strings do not count', JSON.stringify({ text: '['.repeat(10_000) }), false],
    ['escaped quotes keep the string open', JSON.stringify({ text: '\\"' + '['.repeat(10_000) }), false],
    ['100k deep', deep(100_000), true],
    ['closers first do not go negative', ']'.repeat(1000) + deep(MAX_JSON_DEPTH), false],
  ];
  for (const [name, text, expected] of rows) it(name, () => assert.equal(jsonTooDeep(Buffer.from(text)), expected));

  const withMax: [string, string, number, boolean][] = [
    ['flat under max 1', '{"a":1}', 1, false],
    ['two levels over max 1', '{"a":[1]}', 1, true],
    ['escaped quote keeps the string open', '{"a":"\\"[[[["}', 1, false],
    ['siblings do not add up', '[[],[],[]]', 2, false],
    ['multi-byte characters are skipped as data', '{"a":"ü€🎉[["}', 1, false],
  ];
  for (const [name, text, max, expected] of withMax) it(name, () => assert.equal(jsonTooDeep(Buffer.from(text), max), expected));
});
