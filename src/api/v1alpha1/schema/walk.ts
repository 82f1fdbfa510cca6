/** Walks a value together with its schema, so cross-field rules run on the node they are attached to. */
import type { CrossFieldRule } from './rules.ts';
import { RULES_KEYWORD } from './rules.ts';

type SchemaNode = Record<string, unknown>;

export interface RuleSite {
  rule: CrossFieldRule<unknown>;
  /** The value the rule sits on (`self`). */
  self: unknown;
  /** JSON path of `self` ('' for the root). */
  path: string;
}

const IDENTIFIER = /^[A-Za-z_$][A-Za-z0-9_$]*$/;

export function childPath(parent: string, key: string | number): string {
  if (typeof key === 'number') return `${parent}[${key}]`;
  const step = IDENTIFIER.test(key) ? key : JSON.stringify(key);
  if (!IDENTIFIER.test(key)) return `${parent}[${step}]`;
  return parent === '' ? step : `${parent}.${step}`;
}

/** Every (rule, self, path) in `value`, parents before children. */
export function ruleSites(schema: unknown, value: unknown, path = ''): RuleSite[] {
  const out: RuleSite[] = [];
  visit(schema as SchemaNode, value, path, out);
  return out;
}

function visit(schema: SchemaNode, value: unknown, path: string, out: RuleSite[]): void {
  if (value === undefined || value === null || typeof schema !== 'object') return;
  const rules = schema[RULES_KEYWORD] as CrossFieldRule<unknown>[] | undefined;
  if (rules) for (const rule of rules) out.push({ rule, self: value, path });
  if (Array.isArray(value)) {
    const items = schema.items as SchemaNode | undefined;
    if (items) value.forEach((v, i) => visit(items, v, childPath(path, i), out));
    return;
  }
  if (typeof value !== 'object') return;
  const record = value as Record<string, unknown>;
  const properties = schema.properties as Record<string, SchemaNode> | undefined;
  if (properties) {
    for (const [k, s] of Object.entries(properties)) if (k in record) visit(s, record[k], childPath(path, k), out);
  }
  const patterns = schema.patternProperties as Record<string, SchemaNode> | undefined;
  if (patterns) {
    const valueSchema = Object.values(patterns)[0];
    for (const [k, v] of Object.entries(record)) visit(valueSchema, v, childPath(path, k), out);
  }
}

/** The path a rule's issue is reported at: the node's path plus the rule's relative path. */
export function rulePath(sitePath: string, rule: CrossFieldRule<unknown>): string {
  let path = sitePath;
  for (const step of rule.path.split('.').filter(Boolean)) path = childPath(path, step);
  return path;
}
