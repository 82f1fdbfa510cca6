/**
 * The common scalar types of SPEC.md ("Common scalar types"). Each is a typebox schema, so the
 * same definition gives the TypeScript type, the runtime check and the CRD's OpenAPI.
 */
import { Format, Type } from '../typebox.ts';
import { parse } from '@marcbachmann/cel-js';
import { BYTE_SIZE_FORMAT, CEL_FORMAT, EXPECTED_KEYWORD } from './schema/keywords.ts';
import type { NodeOptions } from './schema/build.ts';
import { Str } from './schema/build.ts';
import { RULES_KEYWORD } from './schema/rules.ts';

function describe(o: NodeOptions): Record<string, unknown> {
  const { rules, ...rest } = o;
  return rules && rules.length > 0 ? { ...rest, [RULES_KEYWORD]: rules } : rest;
}

export const ShortString = (o: NodeOptions = {}) => Str(1, 256, o);
export const TinyString = (o: NodeOptions = {}) => Str(1, 64, o);
export const LongString = (o: NodeOptions = {}) => Str(1, 1024, o);

/** Returns why `expression` is not valid CEL (message with line and caret), or undefined when it parses. */
export function celSyntaxError(expression: string): string | undefined {
  try {
    parse(expression);
    return undefined;
  } catch (e) {
    const message = e instanceof Error ? e.message : String(e);
    // cel-js appends a source excerpt with a caret; keep the first line and say where.
    const first = message.split('\n')[0];
    const at = (e as { range?: { start?: number } }).range?.start;
    return at === undefined ? first : `${first} at position ${at}`;
  }
}

Format.Set(CEL_FORMAT, (value: string) => celSyntaxError(value) === undefined);

export const CELExpression = (o: NodeOptions = {}) =>
  Type.String({ minLength: 1, maxLength: 16384, format: CEL_FORMAT, [EXPECTED_KEYWORD]: 'a valid CEL expression', ...describe(o) });

export const DURATION_PATTERN = '^([0-9]{1,5}(h|m|s|ms)){1,4}$';
const DURATION_UNIT_MS: Record<string, number> = { h: 3_600_000, m: 60_000, s: 1000, ms: 1 };

export const Duration = (o: NodeOptions = {}) =>
  Type.String({ maxLength: 32, pattern: DURATION_PATTERN, [EXPECTED_KEYWORD]: 'a duration such as 15s, 1m30s or 250ms (1 to 4 groups of up to 5 digits, each followed by h, m, s or ms)', ...describe(o) });

/** Milliseconds of a Duration that already passed the schema. */
export function parseDuration(value: string): number {
  let total = 0;
  for (const m of value.matchAll(/([0-9]{1,5})(ms|h|m|s)/g)) total += Number(m[1]) * DURATION_UNIT_MS[m[2]];
  return total;
}

/**
 * ByteSize: a Kubernetes-style quantity. The data plane keeps sizes as JavaScript numbers, so the
 * limit is Number.MAX_SAFE_INTEGER (2^53 - 1) bytes; fractional byte counts round up.
 */
export const BYTE_SIZE_LIMIT = Number.MAX_SAFE_INTEGER;
export const BYTE_SIZE_PATTERN = '^(([0-9]+(\\.[0-9]*)?)|(\\.[0-9]+))(([KMGTPE]i)|[numkMGTPE]|([eE][+-]?[0-9]+))?$';
const BYTE_SIZE_RE = /^((?:[0-9]+(?:\.[0-9]*)?)|(?:\.[0-9]+))(?:([KMGTPE]i)|([numkMGTPE])|[eE]([+-]?[0-9]+))?$/;
const BINARY_SUFFIX: Record<string, number> = { Ki: 2 ** 10, Mi: 2 ** 20, Gi: 2 ** 30, Ti: 2 ** 40, Pi: 2 ** 50, Ei: 2 ** 60 };
const DECIMAL_SUFFIX: Record<string, number> = { n: 1e-9, u: 1e-6, m: 1e-3, k: 1e3, M: 1e6, G: 1e9, T: 1e12, P: 1e15, E: 1e18 };

/** Bytes of a ByteSize (integer or quantity string), rounded up; NaN when it is not a ByteSize. */
export function parseByteSize(value: string | number): number {
  if (typeof value === 'number') return Number.isInteger(value) && value >= 0 ? value : Number.NaN;
  const m = BYTE_SIZE_RE.exec(value);
  if (!m) return Number.NaN;
  const [, digits, binary, decimal, exponent] = m;
  const multiplier = binary ? BINARY_SUFFIX[binary] : decimal ? DECIMAL_SUFFIX[decimal] : exponent ? 10 ** Number(exponent) : 1;
  return Math.ceil(Number(digits) * multiplier);
}

Format.Set(BYTE_SIZE_FORMAT, (value: string) => parseByteSize(value) <= BYTE_SIZE_LIMIT);

export const ByteSize = (o: NodeOptions = {}) =>
  Type.Unsafe<string | number>({
    'x-kubernetes-int-or-string': true,
    anyOf: [{ type: 'integer' }, { type: 'string' }],
    minimum: 0,
    maximum: BYTE_SIZE_LIMIT,
    minLength: 1,
    maxLength: 32,
    pattern: BYTE_SIZE_PATTERN,
    format: BYTE_SIZE_FORMAT,
    [EXPECTED_KEYWORD]: `a byte size such as 1024, 16Ki, 2Mi or 1e6, at most ${BYTE_SIZE_LIMIT} bytes`,
    ...describe(o),
  });

const TOKEN = "[-A-Za-z0-9!#$%&'*+.^_`|~]+";
export const HTTPHeaderName = (o: NodeOptions = {}) =>
  Type.String({ minLength: 1, maxLength: 256, pattern: `^${TOKEN}$`, [EXPECTED_KEYWORD]: 'an HTTP header name (token characters)', ...describe(o) });
export const HeaderName = (o: NodeOptions = {}) =>
  Type.String({ minLength: 1, maxLength: 256, pattern: `^:?${TOKEN}$`, [EXPECTED_KEYWORD]: "an HTTP header name (token characters, may start with ':')", ...describe(o) });

const DNS_NAME = '^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$';
export const SNI = (o: NodeOptions = {}) =>
  Type.String({ minLength: 1, maxLength: 253, pattern: DNS_NAME, [EXPECTED_KEYWORD]: 'a lowercase DNS name (labels of a-z, 0-9 and -, starting and ending alphanumeric)', ...describe(o) });
export const SectionName = (o: NodeOptions = {}) =>
  Type.String({ minLength: 1, maxLength: 253, pattern: DNS_NAME, [EXPECTED_KEYWORD]: 'a lowercase DNS-style name', ...describe(o) });

export const Port = (o: NodeOptions = {}) => Type.Integer({ minimum: 1, maximum: 65535, ...describe(o) });

/** http(s)://host[:port][/path] with no query, fragment or user info. */
export const HTTP_URL_PATTERN = '^https?://[^/?#@\\s]+(/[^?#\\s]*)?$';
export const HttpUrl = (o: NodeOptions = {}) =>
  Type.String({ minLength: 1, maxLength: 1024, pattern: HTTP_URL_PATTERN, [EXPECTED_KEYWORD]: 'an http(s)://host[/path] URL without query, fragment or user info', ...describe(o) });

