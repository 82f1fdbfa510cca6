import type { Environment } from '@marcbachmann/cel-js';
import { celError } from '../cel-internals.ts';
import { chargeChars } from '../runtime-budget.ts';

/**
 * String helpers from cel-go's strings extension that the library lacks and header or path
 * manipulation needs. (lowerAscii, upperAscii, trim, split, join, indexOf, substring are built in.)
 */

function count(n: bigint): number {
  return n < 0n ? Infinity : Number(n);
}

/** How many replacements `replace` will make: its output size is known before it is built. */
function occurrences(s: string, from: string, limit: number): number {
  if (from === '') return Math.min(limit, [...s].length + 1);
  let n = 0;
  for (let at = s.indexOf(from); at >= 0 && n < limit; at = s.indexOf(from, at + from.length)) n++;
  return n;
}

function replace(s: string, from: string, to: string, limit: number): string {
  // `"a".replace("", big)` or a short `from` with a long `to` can make the output far larger than
  // the inputs: pay for it before building it (runtime-budget.ts).
  chargeChars(s.length + occurrences(s, from, limit) * to.length);
  if (from === '') {
    // Like Go's strings.Replace: an empty search string matches before every code point and at the end.
    const chars = [...s];
    let out = '';
    for (let i = 0; i <= chars.length; i++) out += (i < limit ? to : '') + (chars[i] ?? '');
    return out;
  }
  let out = '';
  let pos = 0;
  for (let n = 0; n < limit; n++) {
    const at = s.indexOf(from, pos);
    if (at < 0) break;
    out += s.slice(pos, at) + to;
    pos = at + from.length;
  }
  return out + s.slice(pos);
}

export function registerStringFunctions(env: Environment): void {
  env.registerFunction('string.replace(string, string): string', (s: string, a: string, b: string) => replace(s, a, b, Infinity), {
    description: 'Replaces every occurrence of a substring.',
  });
  env.registerFunction('string.replace(string, string, int): string', (s: string, a: string, b: string, n: bigint) =>
    replace(s, a, b, count(n)), { description: 'Replaces at most n occurrences (n < 0: all).' });
  env.registerFunction('string.charAt(int): string', (s: string, i: bigint) => {
    const chars = [...s];
    if (i < 0n || i > BigInt(chars.length)) throw celError('index_out_of_range', `charAt(${i}): index out of range`);
    return chars[Number(i)] ?? '';
  }, { description: 'The code point at an index ("" at the end of the string).' });
  env.registerFunction('string.reverse(): string', (s: string) => [...s].reverse().join(''), {
    description: 'The string with its code points in reverse order.',
  });
}
