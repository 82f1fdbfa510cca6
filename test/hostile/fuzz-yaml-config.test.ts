/**
 * fast-check properties over the configuration file parser, through the same `fuzz()` the
 * on-demand fuzzer runs (fuzz/yaml-config.fuzz.ts): random bytes, and YAML built from what makes
 * parsers slow or large — anchors and aliases (chains and fans), deep nesting, many documents,
 * many and repeated keys. Every call returns objects or a reported error, and returns fast.
 */
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { assertPrompt } from './fuzz-bound.ts';
import { check, fuzz } from '../../fuzz/yaml-config.fuzz.ts';

function timed(run: () => void, size: number): void {
  assertPrompt(run, () => `${size} characters`);
}

const envelope = (name: string): string => `apiVersion: v1\nkind: ConfigMap\nmetadata: {name: ${name}}\n`;

/** A mapping of anchors where each value aliases earlier anchors: chains, fans and billion-laughs shapes. */
const aliasDocument = fc.array(fc.array(fc.nat({ max: 30 }), { maxLength: 12 }), { minLength: 1, maxLength: 60 }).map((rows) => {
  const lines = [envelope('aliases'), 'data:', '  a0: &a0 [x, y]'];
  rows.forEach((refs, i) => lines.push(`  a${i + 1}: &a${i + 1} [${refs.map((r) => `*a${Math.min(r, i)}`).join(', ')}]`));
  return lines.join('\n');
});

const deepDocument = fc.tuple(fc.integer({ min: 1, max: 400 }), fc.constantFrom('flow-seq', 'flow-map', 'block')).map(([depth, style]) => {
  if (style === 'flow-seq') return `${envelope('deep')}data: {v: ${'['.repeat(depth)}${']'.repeat(depth)}}\n`;
  if (style === 'flow-map') return `${envelope('deep')}data: ${'{a: '.repeat(depth)}1${'}'.repeat(depth)}\n`;
  return `${envelope('deep')}data:\n${Array.from({ length: Math.min(depth, 120) }, (_, i) => `${' '.repeat(2 * (i + 1))}k:`).join('\n')} 1\n`;
});

const manyDocuments = fc.tuple(fc.integer({ min: 0, max: 120 }), fc.boolean()).map(([count, named]) =>
  Array.from({ length: count }, (_, i) => (named ? envelope(`cm-${i}`) : '')).join('---\n'));

const keys = fc.array(fc.constantFrom('a', 'b', 'c', '"a"', '1', '01', 'true', 'null', '~', '? [x]', '<<'), { maxLength: 200 }).map((ks) =>
  `${envelope('keys')}data:\n${ks.map((k, i) => `  ${k}${k.startsWith('?') ? '\n  :' : ':'} ${i}`).join('\n')}\n`);

const pieces = fc.array(fc.constantFrom('&a ', '*a', '&b ', '*b', '[', ']', '{', '}', ': ', '- ', '\n', '  ', '---\n', '...\n', '!!str ', '!!binary ', '? ', '|', '>', '"', "'", '#', '%YAML 1.2\n', 'x', 'apiVersion: v1\n', 'kind: Service\n', 'metadata: {name: s}\n', '<<: *a\n', '\t', '\u0000', '\uFEFF'), { maxLength: 120 }).map((p) => p.join(''));

describe('configuration parser fuzz properties', () => {
  it('random bytes', () => {
    fc.assert(fc.property(fc.uint8Array({ maxLength: 2_048 }), (bytes) => timed(() => fuzz(Buffer.from(bytes)), bytes.length)), { numRuns: 400 });
  });

  for (const [name, arbitrary] of [
    ['anchors and aliases', aliasDocument],
    ['deep nesting', deepDocument],
    ['many documents', manyDocuments],
    ['many and repeated keys', keys],
    ['YAML syntax pieces', pieces],
  ] as const) {
    it(name, () => {
      fc.assert(fc.property(arbitrary, (text) => timed(() => check(text), text.length)), { numRuns: 150 });
    });
  }
});
