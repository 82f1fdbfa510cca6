import type { Activation } from './activation.ts';
import type { EvalResult, Program } from './compile.ts';
import { scalarToString, toJsonValue } from './values.ts';
import type { JsonValue } from './values.ts';

/**
 * Typed evaluation helpers. `Program.evaluate` gives the raw CEL value; these coerce it to what
 * a feature consumes and turn a value of the wrong kind into a failure, never an exception.
 */

function wrongType(expected: string, value: unknown): EvalResult<never> {
  const kind = value === null ? 'null' : Array.isArray(value) ? 'list' : typeof value === 'object' ? (value.constructor?.name ?? 'map') : typeof value;
  return { ok: false, error: { code: 'wrong_result_type', message: `expected ${expected}, got ${kind}` } };
}

/** A condition: true, false, or 'error' (the expression failed or did not produce a bool). */
export function evalBool(program: Program, activation: Activation): boolean | 'error' {
  const result = program.evaluate(activation);
  return result.ok && typeof result.value === 'boolean' ? result.value : 'error';
}

/**
 * Text for a header value, path or label: strings as they are, bytes as UTF-8, numbers and bools
 * as CEL's string() writes them. Lists and maps are a failure (use toJson() in the expression).
 */
export function evalString(program: Program, activation: Activation): EvalResult<string> {
  const result = program.evaluate(activation);
  if (!result.ok) return result;
  const text = scalarToString(result.value);
  return text === undefined ? wrongType('a string', result.value) : { ok: true, value: text };
}

/** The result as JSON-compatible data (bytes as base64, ints beyond 2^53 as strings): log attributes, bodies. */
export function evalValue(program: Program, activation: Activation): EvalResult<JsonValue> {
  const result = program.evaluate(activation);
  if (!result.ok) return result;
  try {
    return { ok: true, value: toJsonValue(result.value) };
  } catch (err) {
    return { ok: false, error: { code: 'wrong_result_type', message: (err as Error).message } };
  }
}

/** A number (int, uint or double) as a JS number: rate-limit costs, sampling ratios. */
export function evalNumber(program: Program, activation: Activation): EvalResult<number> {
  const result = program.evaluate(activation);
  if (!result.ok) return result;
  const v = result.value;
  if (typeof v === 'number') return { ok: true, value: v };
  if (typeof v === 'bigint') return { ok: true, value: Number(v) };
  if (v !== null && typeof v === 'object' && 'value' in v && typeof v.value === 'bigint') return { ok: true, value: Number(v.value) };
  return wrongType('a number', v);
}

/**
 * A body to send: strings and bytes are written as they are, anything else as JSON
 * (SPEC.md: directResponse bodyExpression, extAuth http body).
 */
export function evalBody(program: Program, activation: Activation): EvalResult<string | Uint8Array> {
  const result = program.evaluate(activation);
  if (!result.ok) return result;
  const v = result.value;
  if (typeof v === 'string' || v instanceof Uint8Array) return { ok: true, value: v };
  try {
    return { ok: true, value: JSON.stringify(toJsonValue(v)) };
  } catch (err) {
    return { ok: false, error: { code: 'wrong_result_type', message: (err as Error).message } };
  }
}
