import { compile } from '../../../cel/index.ts';
import { BYTE_SIZE_FORMAT, CEL_FORMAT } from '../../../api/v1alpha1/schema/keywords.ts';
import { childPath } from '../../../api/v1alpha1/schema/walk.ts';
import { DURATION_PATTERN, parseByteSize, parseDuration } from '../../../api/v1alpha1/scalars.ts';
import type { BackendObjectReference } from '../../../api/gateway/index.ts';
import type { BackendResolver } from '../backend.ts';
import { isDict } from '../read.ts';
import type { Snapshot } from '../snapshot.ts';
import { lookupSecret, lookupSecretKey, type ConfigSources } from './secrets.ts';

type SchemaNode = Record<string, unknown>;

/** What lowering a policy member needs: where Secrets and backends are, and where to report problems. */
export interface LowerContext {
  readonly namespace: string;
  readonly sources: ConfigSources;
  readonly resolver: BackendResolver;
  /** Problems found (bad CEL, missing Secret, unresolved backend), each naming its field. */
  readonly problems: string[];
  /** For members that look objects up themselves (MCP guardrail Services); absent: they report the reference as unresolved. */
  readonly snapshot?: Snapshot;
}

/** CEL fields whose result decides something, so they must produce a bool. */
const BOOL_FIELDS = /(matchExpressions\[\d+\]|\.condition|\.filter|\.unhealthyCondition)$/;

const keysOf = (schema: SchemaNode): string => (isDict(schema.properties) ? Object.keys(schema.properties).sort().join(',') : '');
const isSecretKeyRef = (schema: SchemaNode): boolean => keysOf(schema) === 'group,key,kind,name';
const isSecretObjectRef = (schema: SchemaNode): boolean => keysOf(schema) === 'group,kind,name';
const isBackendRef = (schema: SchemaNode): boolean => keysOf(schema) === 'group,kind,name,namespace,port';
const isDuration = (schema: SchemaNode): boolean => schema.pattern === DURATION_PATTERN;

/**
 * Turns a member as written (already schema-valid) into its IR shape, guided by its schema:
 * compiles every CEL expression, turns Durations into `<name>Ms` and ByteSizes into bytes,
 * replaces a Secret reference `xRef` by `x` (the value, or the Secret's entries) and an endpoint
 * `backendRef` by `backendKey`. Problems are collected in `ctx.problems`; the result is still
 * returned so one mistake does not hide the next.
 */
export function lower(schema: unknown, value: unknown, path: string, ctx: LowerContext): unknown {
  const node = (isDict(schema) ? schema : {}) as SchemaNode;
  if (typeof value === 'string' && node.format === CEL_FORMAT) return checkCel(value, path, ctx);
  if (node.format === BYTE_SIZE_FORMAT && (typeof value === 'string' || typeof value === 'number')) return parseByteSize(value);
  if (Array.isArray(value)) return value.map((item, i) => lower(node.items, item, childPath(path, i), ctx));
  if (!isDict(value)) return value;
  const properties = isDict(node.properties) ? (node.properties as Record<string, SchemaNode>) : undefined;
  const patterns = isDict(node.patternProperties) ? (Object.values(node.patternProperties)[0] as SchemaNode) : undefined;
  const out: Record<string, unknown> = {};
  for (const [key, child] of Object.entries(value)) {
    const childSchema = properties?.[key] ?? patterns ?? {};
    const at = childPath(path, key);
    if (key.endsWith('Ref') && isDict(child) && isSecretKeyRef(childSchema)) {
      const defaultKey = isDict(childSchema.properties) && isDict(childSchema.properties.key) ? childSchema.properties.key.default : undefined;
      const entry = typeof child.key === 'string' ? child.key : typeof defaultKey === 'string' ? defaultKey : '';
      const found = lookupSecretKey(ctx.sources, ctx.namespace, child, entry, at);
      if (found.ok) out[key.slice(0, -3)] = found.value;
      else ctx.problems.push(found.message);
    } else if (key.endsWith('Ref') && isDict(child) && isSecretObjectRef(childSchema)) {
      const found = lookupSecret(ctx.sources, ctx.namespace, child, at);
      if (found.ok) out[key.slice(0, -3)] = found.value;
      else ctx.problems.push(found.message);
    } else if (key === 'backendRef' && isDict(child) && isBackendRef(childSchema)) {
      const resolved = ctx.resolver.resolve(child as unknown as BackendObjectReference, at);
      if (resolved.backendKey !== null) out.backendKey = resolved.backendKey;
      else ctx.problems.push(resolved.problem?.message ?? `${at} does not resolve`);
    } else if (typeof child === 'string' && isDuration(childSchema)) {
      out[`${key}Ms`] = parseDuration(child);
    } else {
      out[key] = lower(childSchema, child, at, ctx);
    }
  }
  return out;
}

function checkCel(expression: string, path: string, ctx: LowerContext): string {
  const result = compile(expression, BOOL_FIELDS.test(path) ? { expect: ['bool'] } : {});
  if (!result.ok && result.error.cost !== undefined) {
    // Valid, but too expensive to run per request: refused like a compile error (docs/cel.md "Cost limits").
    ctx.problems.push(`${path}: CEL expression over its cost budget: ${result.error.message}`);
  } else if (!result.ok) {
    const at = result.error.position ? ` (line ${result.error.position.line}, column ${result.error.position.column})` : '';
    ctx.problems.push(`${path}: invalid CEL expression${at}: ${result.error.message}`);
  }
  return expression;
}
