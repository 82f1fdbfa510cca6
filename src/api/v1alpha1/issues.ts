/**
 * The one place that turns typebox's raw validation errors into messages a person understands,
 * at JSON paths like `spec.ai.groups[0].providers`.
 */
import type { TLocalizedValidationError } from 'typebox/error';
import { childPath } from './schema/walk.ts';
import { CEL_FORMAT, EXPECTED_KEYWORD } from './schema/keywords.ts';
import { celSyntaxError } from './scalars.ts';

export interface ApiIssue {
  path: string;
  message: string;
  severity: 'error' | 'note';
}

type Json = Record<string, unknown>;

function decodePointer(pointer: string): string[] {
  return pointer.split('/').slice(1).map((s) => s.replace(/~1/g, '/').replace(/~0/g, '~'));
}

/** JSON path of a JSON pointer, using the value to tell array indexes from keys. */
export function pointerToPath(pointer: string, root: unknown, base = ''): string {
  let path = base;
  let node = root;
  for (const step of decodePointer(pointer)) {
    if (Array.isArray(node)) {
      path = childPath(path, Number(step));
      node = node[Number(step)];
    } else {
      path = childPath(path, step);
      node = node && typeof node === 'object' ? (node as Json)[step] : undefined;
    }
  }
  return path;
}

function valueAt(pointer: string, root: unknown): unknown {
  let node = root;
  for (const step of decodePointer(pointer)) node = node && typeof node === 'object' ? (node as Json)[step] : undefined;
  return node;
}

function schemaAt(schemaPath: string, root: unknown): Json {
  return (valueAt(schemaPath.replace(/^#/, ''), root) ?? {}) as Json;
}

function show(value: unknown): string {
  const text = JSON.stringify(value) ?? String(value);
  return text.length > 60 ? `${text.slice(0, 57)}...` : text;
}

function typeName(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'a list';
  if (typeof value === 'object') return 'an object';
  if (typeof value === 'number') return Number.isInteger(value) ? 'an integer' : 'a number';
  return `a ${typeof value}`;
}

const ARTICLE: Record<string, string> = { integer: 'an integer', object: 'an object', array: 'a list', string: 'a string', number: 'a number', boolean: 'a boolean' };

function size(value: unknown): number {
  if (typeof value === 'string') return [...value].length;
  if (Array.isArray(value)) return value.length;
  if (value && typeof value === 'object') return Object.keys(value).length;
  return 0;
}

/** Translates typebox errors for `value` (validated against `schema`); paths are prefixed with `base`. */
export function translateErrors(errors: readonly TLocalizedValidationError[], schema: unknown, value: unknown, base = ''): ApiIssue[] {
  const out: ApiIssue[] = [];
  for (const e of errors) {
    // Branch errors of int-or-string nodes repeat what the anyOf error says; "schema is false" repeats additionalProperties.
    if (e.schemaPath.includes('/anyOf/') || e.keyword === 'boolean') continue;
    const path = pointerToPath(e.instancePath, value, base);
    const actual = valueAt(e.instancePath, value);
    const node = schemaAt(e.schemaPath, schema);
    const expected = node[EXPECTED_KEYWORD] as string | undefined;
    const params = e.params as Json;
    const limit = params.limit as number;
    const push = (message: string, at = path) => out.push({ path: at, message, severity: 'error' });
    switch (e.keyword) {
      case 'required':
        for (const name of params.requiredProperties as string[]) push('is required', childPath(path, name));
        break;
      case 'additionalProperties':
        for (const name of params.additionalProperties as string[]) {
          const known = Object.keys((node.properties as Json | undefined) ?? {});
          push(`unknown field${known.length ? `; known fields: ${known.join(', ')}` : ''}`, childPath(path, name));
        }
        break;
      case 'type':
        push(`must be ${ARTICLE[params.type as string] ?? params.type}, got ${typeName(actual)}`);
        break;
      case 'anyOf':
        push(`must be ${expected ?? 'a valid value'}, got ${typeName(actual)}`);
        break;
      case 'enum':
        push(`must be one of ${(node.enum as string[]).join(', ')}, got ${show(actual)}`);
        break;
      case 'minLength':
        push(limit === 1 && size(actual) === 0 ? 'must not be empty' : `must be at least ${limit} characters, has ${size(actual)}`);
        break;
      case 'maxLength':
        push(`must be at most ${limit} characters, has ${size(actual)}`);
        break;
      case 'minItems':
        push(`must have at least ${limit} item${limit === 1 ? '' : 's'}, has ${size(actual)}`);
        break;
      case 'maxItems':
        push(`must have at most ${limit} items, has ${size(actual)}`);
        break;
      case 'minProperties':
        push(`must have at least ${limit} entr${limit === 1 ? 'y' : 'ies'}, has ${size(actual)}`);
        break;
      case 'maxProperties':
        push(`must have at most ${limit} entries, has ${size(actual)}`);
        break;
      case 'minimum':
        push(`must be at least ${limit}, got ${show(actual)}`);
        break;
      case 'maximum':
        push(`must be at most ${limit}, got ${show(actual)}`);
        break;
      case 'pattern':
        push(`must be ${expected ?? `a string matching ${params.pattern as string}`}, got ${show(actual)}`);
        break;
      case 'format':
        if (params.format === CEL_FORMAT) push(`invalid CEL expression: ${celSyntaxError(String(actual)) ?? 'does not parse'}`);
        else push(`must be ${expected ?? `in format ${params.format as string}`}, got ${show(actual)}`);
        break;
      default:
        push(e.message);
    }
  }
  return dedupe(out);
}

export function dedupe(issues: readonly ApiIssue[]): ApiIssue[] {
  const seen = new Set<string>();
  return issues.filter((i) => {
    const key = `${i.path}\u0000${i.message}`;
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}
