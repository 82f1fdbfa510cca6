import { Duration, UnsignedInt } from '@marcbachmann/cel-js/evaluator';
import { Optional } from '@marcbachmann/cel-js';
import { CIDRPrefix, IPAddress } from './ip-address.ts';

/**
 * Conversions between plain JavaScript data and the value model of @marcbachmann/cel-js:
 * CEL `int` is a bigint, `double` a number, `bytes` a Uint8Array, `map` a Map or plain object,
 * `timestamp` a Date, `duration` the library's Duration.
 */

/** Any value a CEL expression can produce. */
export type CelValue = unknown;

/** JSON-compatible data, as handed back to callers that log, serialise or put values on the wire. */
export type JsonValue = null | boolean | number | string | JsonValue[] | { [key: string]: JsonValue };

/**
 * A map whose keys come from outside (headers, claims, JSON bodies). A null prototype keeps a key
 * such as `__proto__` or `constructor` an ordinary entry instead of touching Object.prototype.
 */
export function newMap(): Record<string, unknown> {
  return Object.create(null) as Record<string, unknown>;
}

/**
 * Converts JSON-like data (JWT claims, key metadata, parsed bodies) into CEL values: whole numbers
 * become `int` so `jwt.exp + 60` type-checks, other numbers stay `double`.
 */
export function toCel(value: unknown): CelValue {
  switch (typeof value) {
    case 'number':
      return Number.isSafeInteger(value) ? BigInt(value) : value;
    case 'string':
    case 'boolean':
    case 'bigint':
      return value;
    case 'object': {
      if (value === null) return null;
      if (Array.isArray(value)) return value.map(toCel);
      if (value instanceof Uint8Array) return asBytes(value);
      if (value instanceof Date || value instanceof Duration || value instanceof UnsignedInt) return value;
      if (value instanceof Map) {
        const out = newMap();
        for (const [k, v] of value) out[String(k)] = toCel(v);
        return out;
      }
      const out = newMap();
      for (const key of Object.keys(value)) out[key] = toCel((value as Record<string, unknown>)[key]);
      return out;
    }
    default:
      // undefined, functions, symbols: not representable; callers drop the key.
      return undefined;
  }
}

/** cel-js recognises bytes by the Uint8Array constructor; a Node Buffer must be viewed as one. */
export function asBytes(value: Uint8Array): Uint8Array {
  return value.constructor === Uint8Array ? value : new Uint8Array(value.buffer, value.byteOffset, value.byteLength);
}

/**
 * Converts a CEL result to JSON-compatible data, following the proto3 JSON mapping that cel-spec
 * uses: bytes become base64, timestamps RFC 3339, durations "1.5s", ints beyond 2^53 strings.
 * Throws on values JSON cannot carry (types, NaN) so callers can treat them as a failed expression.
 */
export function toJsonValue(value: CelValue): JsonValue {
  switch (typeof value) {
    case 'string':
    case 'boolean':
      return value;
    case 'number':
      if (!Number.isFinite(value)) throw new Error(`${value} has no JSON representation`);
      return value;
    case 'bigint':
      return bigintToJson(value);
    case 'object': {
      if (value === null) return null;
      if (Array.isArray(value)) return value.map(toJsonValue);
      if (value instanceof Uint8Array) return Buffer.from(value.buffer, value.byteOffset, value.byteLength).toString('base64');
      if (value instanceof Date) return value.toISOString();
      if (value instanceof Duration) return value.toString();
      if (value instanceof UnsignedInt) return bigintToJson(value.value);
      if (value instanceof Optional) return value.hasValue() ? toJsonValue(value.value()) : null;
      if (value instanceof Set) return [...value].map(toJsonValue);
      if (value instanceof IPAddress || value instanceof CIDRPrefix) return value.toString();
      const proto: unknown = Object.getPrototypeOf(value);
      if (!(value instanceof Map) && proto !== null && proto !== Object.prototype) {
        throw new Error(`a ${value.constructor?.name ?? 'value'} has no JSON representation`);
      }
      const out: { [key: string]: JsonValue } = {};
      const entries = value instanceof Map ? value.entries() : Object.entries(value);
      for (const [k, v] of entries) {
        if (v === undefined) continue;
        Object.defineProperty(out, String(k), { value: toJsonValue(v), enumerable: true, writable: true, configurable: true });
      }
      return out;
    }
    default:
      throw new Error(`a value of type ${typeof value} has no JSON representation`);
  }
}

function bigintToJson(value: bigint): number | string {
  return value <= BigInt(Number.MAX_SAFE_INTEGER) && value >= BigInt(Number.MIN_SAFE_INTEGER) ? Number(value) : value.toString();
}

/**
 * The text of a scalar CEL value as CEL's `string()` would produce it (bytes as UTF-8), or
 * undefined for lists, maps and other structured values.
 */
export function scalarToString(value: CelValue): string | undefined {
  switch (typeof value) {
    case 'string':
      return value;
    case 'boolean':
    case 'bigint':
      return String(value);
    case 'number':
      if (value === Infinity) return '+Inf';
      if (value === -Infinity) return '-Inf';
      return String(value);
    case 'object':
      if (value instanceof Uint8Array) return Buffer.from(value.buffer, value.byteOffset, value.byteLength).toString('utf8');
      if (value instanceof UnsignedInt) return value.toString();
      if (value instanceof Date) return value.toISOString();
      if (value instanceof Duration) return value.toString();
      return undefined;
    default:
      return undefined;
  }
}
