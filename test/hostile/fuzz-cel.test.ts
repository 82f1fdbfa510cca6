/**
 * fast-check properties over CEL, through the same `fuzz()` the on-demand fuzzer runs
 * (fuzz/cel.fuzz.ts): random bytes, random text from CEL's alphabet, and expressions built from a
 * small grammar that nests comprehensions, macros, binds and allocating functions over request
 * data — the shapes whose cost the limits exist for. Every call returns (compile and evaluation
 * never throw) and returns fast (the runtime budget stops any evaluation at about 60 ms).
 */
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { assertPrompt } from './fuzz-bound.ts';
import { fuzz } from '../../fuzz/cel.fuzz.ts';

function timed(source: string | Uint8Array): void {
  const data = typeof source === 'string' ? Buffer.from(source, 'utf8') : Buffer.from(source);
  assertPrompt(() => fuzz(data), () => JSON.stringify(data.toString('utf8')).slice(0, 300));
}

const VARS = ['x', 'y', 'z'];
const leaf = fc.oneof(
  fc.constantFrom(
    'request.path', "request.headers['x-groups']", 'request.headers', 'jwt.groups', 'jwt.nested', 'json(request.body).messages',
    'request.body', 'source.address', '[1, 2, 3]', "['a', 'b']", '{"k": 1}', '""', '"ab"', '0', '1', 'true', 'null', ...VARS,
  ),
  fc.integer({ min: -5, max: 50 }).map(String),
  fc.string({ maxLength: 6 }).map((s) => JSON.stringify(s)),
);

const expression = fc.letrec<{ expr: string }>((tie) => ({
  expr: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    leaf,
    fc.tuple(tie('expr'), fc.constantFrom('all', 'exists', 'exists_one', 'map', 'filter'), fc.constantFrom(...VARS), tie('expr'))
      .map(([range, macro, v, body]) => `${range}.${macro}(${v}, ${body})`),
    fc.tuple(tie('expr'), fc.constantFrom(...VARS), tie('expr'), tie('expr'))
      .map(([range, v, filter, body]) => `${range}.map(${v}, ${filter}, ${body})`),
    fc.tuple(fc.constantFrom(...VARS), tie('expr'), tie('expr')).map(([v, value, body]) => `cel.bind(${v}, ${value}, ${body})`),
    fc.tuple(tie('expr'), fc.constantFrom('+', '==', '!=', 'in', '&&', '||', '<', '*', '-'), tie('expr')).map(([a, op, b]) => `(${a} ${op} ${b})`),
    fc.tuple(tie('expr'), tie('expr'), tie('expr')).map(([c, a, b]) => `(${c} ? ${a} : ${b})`),
    fc.tuple(fc.constantFrom('size', 'string', 'toJson', 'json', 'int', 'dyn', 'has'), tie('expr')).map(([f, a]) => `${f}(${a})`),
    fc.tuple(tie('expr'), fc.constantFrom("split(',')", "join(',')", 'lowerAscii()', "matches('a+')", "startsWith('/')", 'size()', 'reverse()'))
      .map(([r, m]) => `${r}.${m}`),
    fc.tuple(tie('expr'), tie('expr')).map(([s, t]) => `${s}.replace('a', ${t})`),
    fc.tuple(tie('expr'), tie('expr')).map(([s, t]) => `regexReplace(${s}, '.', ${t})`),
    fc.tuple(tie('expr'), tie('expr')).map(([a, b]) => `default(${a}, ${b})`),
    fc.array(tie('expr'), { maxLength: 4 }).map((items) => `[${items.join(', ')}]`),
  ),
})).expr;

/** Doubling and nesting that are certain to exceed the budget, to keep the slow path covered. */
const explosive = fc.tuple(fc.integer({ min: 2, max: 40 }), fc.constantFrom('s + s', '[s, s]', 's.map(q, s)', "s.split('').map(q, s)"), fc.constantFrom('request.path', "['a', 'b']", 'json(request.body).messages'))
  .map(([depth, grow, seed]) => `${'cel.bind(s, GROW, '.repeat(depth).replaceAll('GROW', grow)}size(toJson(s)) > 0${')'.repeat(depth)}`.replace(`cel.bind(s, ${grow}, `, `cel.bind(s, ${seed}, `));

describe('CEL fuzz properties', () => {
  it('random bytes', () => {
    fc.assert(fc.property(fc.uint8Array({ maxLength: 256 }), (bytes) => timed(bytes)), { numRuns: 500 });
  });

  it('random text from CEL characters', () => {
    const alphabet = fc.constantFrom(...'abcxyz019 .,()[]{}"\'+-*/%!=<>?:&|_'.split(''), '.all(', '.map(', 'request.', ' in ', '"\\');
    fc.assert(fc.property(fc.array(alphabet, { maxLength: 80 }).map((p) => p.join('')), (s) => timed(s)), { numRuns: 500 });
  });

  it('grammar-built nested comprehensions, macros and allocations', () => {
    fc.assert(fc.property(expression, (s) => timed(s)), { numRuns: 1_000 });
  });

  it('doubling and nesting built to exceed the budget', () => {
    fc.assert(fc.property(explosive, (s) => timed(s)), { numRuns: 40 });
  });
});
