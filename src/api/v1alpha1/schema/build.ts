/**
 * Small builders over typebox so every schema in this API is shaped the same way: closed
 * objects (unknown fields are mistakes users want to hear about), string enums with a `type`
 * (structural CRDs need one), bounded lists and maps, and cross-field rules kept on the node
 * they talk about.
 */
import { Type } from '../../typebox.ts';
import type { TObject, TProperties, TSchema, TUnsafe } from 'typebox';
import { RULES_KEYWORD } from './rules.ts';
import type { CrossFieldRule } from './rules.ts';

export interface NodeOptions {
  [key: string]: unknown;
  description?: string;
  default?: unknown;
  // Rules are stored on the node; their `self` is whatever this node holds.
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  rules?: readonly CrossFieldRule<any>[];
}

function options(o: NodeOptions & { [key: string]: unknown }): Record<string, unknown> {
  const { rules, ...rest } = o;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(rest)) if (v !== undefined) out[k] = v;
  if (rules && rules.length > 0) out[RULES_KEYWORD] = rules;
  return out;
}

export const Opt = Type.Optional;

export function Obj<P extends TProperties>(properties: P, o: NodeOptions & { minProperties?: number } = {}): TObject<P> {
  return Type.Object(properties, { additionalProperties: false, ...options(o) });
}

export function Str(min: number, max: number, o: NodeOptions & { pattern?: string } = {}) {
  return Type.String(options({ minLength: min, maxLength: max, ...o }));
}

export function Int(min?: number, max?: number, o: NodeOptions = {}) {
  return Type.Integer(options({ minimum: min, maximum: max, ...o }));
}

export function Bool(o: NodeOptions = {}) {
  return Type.Boolean(options(o));
}

/** A closed set of string values (enum with `type: string`, as structural CRDs require). */
export function OneOf<const V extends readonly string[]>(values: V, o: NodeOptions = {}): TUnsafe<V[number]> {
  return Type.Unsafe<V[number]>({ type: 'string', enum: [...values], ...options(o) });
}

export function List<T extends TSchema>(item: T, o: NodeOptions & { min?: number; max?: number } = {}) {
  const { min, max, ...rest } = o;
  return Type.Array(item, options({ minItems: min, maxItems: max, ...rest }));
}

/** A string-keyed map. */
export function MapOf<T extends TSchema>(value: T, o: NodeOptions & { min?: number; max?: number } = {}) {
  const { min, max, ...rest } = o;
  return Type.Record(Type.String(), value, options({ minProperties: min, maxProperties: max, ...rest }));
}

/** Any JSON value, kept as written. */
export function JsonValue(description?: string): TUnsafe<unknown> {
  return Type.Unsafe<unknown>(options({ description, 'x-kubernetes-preserve-unknown-fields': true }));
}

/** A JSON object whose members this API does not model (kept as written). */
export function JsonObject(description?: string): TUnsafe<Record<string, unknown>> {
  return Type.Unsafe<Record<string, unknown>>(options({ type: 'object', description, 'x-kubernetes-preserve-unknown-fields': true }));
}
