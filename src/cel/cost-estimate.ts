import type { ASTNode } from '@marcbachmann/cel-js';
import { expandedChildren, raw } from './cel-internals.ts';
import type { ComprehensionArgs } from './cel-internals.ts';
import { DATA_SIZE_BOUNDS } from './cost-limits.ts';
import { nodeCount } from './instrument.ts';

/**
 * The worst-case cost of an expression, estimated from its checked AST before it ever runs, in
 * the units the runtime meter counts (instrument.ts) — the way cel-go's cost estimator works:
 *
 * - a comprehension costs its range's largest size × (its body's node count + the body's own
 *   estimated cost), so nested `all()`/`map()` multiply;
 * - every operator and function call costs 1;
 * - sizes come from literals (a list literal has exactly its elements) or, for request data, from
 *   the bounds in DATA_SIZE_BOUNDS (a header map has at most 100 entries, a list parsed from the
 *   body at most half the body's bytes, an element of a value is no larger than the value).
 *
 * Only the structure is estimated: work that grows with the length of strings (concatenation,
 * scanning) is left to the runtime meter, because a static bound on it would multiply the largest
 * request by every loop and refuse ordinary expressions.
 */

export interface CostEstimate {
  /** Worst-case cost units. */
  readonly cost: number;
  /** Whether some loop's range size comes from request data (a bound) rather than from literals. */
  readonly dataDependent: boolean;
}

interface Estimate {
  cost: number;
  /** Largest number of elements/entries/characters the value can have. */
  size: number;
  /** The size is a bound on request data, not a literal count. */
  data: boolean;
}

type Scope = ReadonlyMap<string, Estimate>;

const BINARY = new Set(['==', '!=', 'in', '+', '-', '*', '/', '%', '<', '<=', '>', '>=']);
const SMALL: Estimate = { cost: 0, size: 1, data: false };

export function estimateCost(ast: ASTNode): CostEstimate {
  const state = { dataDependent: false };
  const e = estimate(ast, new Map(), state);
  return { cost: e.cost, dataDependent: state.dataDependent };
}

/** Size bounds of what a path into the request context can hold. */
function variableSize(path: string): Estimate {
  if (path === 'request.body' || path === 'response.body') return { cost: 0, size: DATA_SIZE_BOUNDS.body, data: true };
  if (path === 'request.headers' || path === 'response.headers') return { cost: 0, size: DATA_SIZE_BOUNDS.headerCount, data: true };
  if (path.startsWith('request.headers.') || path.startsWith('response.headers.')) return { cost: 0, size: DATA_SIZE_BOUNDS.headerBytes, data: true };
  if (path === 'request' || path === 'response') return { cost: 0, size: DATA_SIZE_BOUNDS.body, data: true };
  return { cost: 0, size: DATA_SIZE_BOUNDS.other, data: true };
}

/** `request.headers.x` as a dotted path when `node` is a plain access chain from a variable. */
function accessPath(node: ASTNode, scope: Scope): string | undefined {
  switch (node.op) {
    case 'id':
      return scope.has(node.args) ? undefined : node.args;
    case '.':
    case '.?': {
      const base = accessPath(node.args[0], scope);
      return base === undefined ? undefined : `${base}.${node.args[1]}`;
    }
    case '[]':
    case '[?]': {
      const base = accessPath(node.args[0], scope);
      if (base === undefined) return undefined;
      const index = node.args[1];
      return index.op === 'value' && typeof index.args === 'string' ? `${base}.${index.args}` : `${base}.*`;
    }
    default:
      return undefined;
  }
}

function literalSize(value: unknown): number {
  if (typeof value === 'string') return value.length;
  if (value instanceof Uint8Array) return value.byteLength;
  return 1;
}

function sum(parts: readonly Estimate[], extra = 0): Estimate {
  let cost = extra;
  let data = false;
  for (const p of parts) {
    cost += p.cost;
    data ||= p.data;
  }
  return { cost, size: 1, data };
}

function estimate(node: ASTNode, scope: Scope, state: { dataDependent: boolean }): Estimate {
  const alternate = raw(node).meta.alternate;
  if (alternate !== undefined) return estimate(alternate as unknown as ASTNode, scope, state);
  const op = node.op as string;
  const path = accessPath(node, scope);
  if (path !== undefined) return variableSize(path);
  const sub = (n: ASTNode, s: Scope = scope): Estimate => estimate(n, s, state);
  switch (op) {
    case 'value':
      return { cost: 0, size: literalSize(node.args), data: false };
    case 'id':
      return scope.get(node.args as string) ?? SMALL;
    case '.':
    case '.?':
    case '[]':
    case '[?]': {
      // A field or element of a value is no larger than the value.
      const parts = expandedChildren(node).map((c) => sub(c));
      return { ...sum(parts), size: parts[0].size, data: parts[0].data };
    }
    case 'list': {
      const parts = (node.args as ASTNode[]).map((c) => sub(c));
      return { ...sum(parts), size: parts.length };
    }
    case 'map': {
      const parts = (node.args as [ASTNode, ASTNode][]).flat().map((c) => sub(c));
      return { ...sum(parts), size: parts.length / 2 };
    }
    case 'comprehension':
      return comprehension(node.args as unknown as ComprehensionArgs, scope, state);
    case 'accuPush':
    case 'accuValue':
    case 'accuInc':
      return { ...sum(expandedChildren(node).map((c) => sub(c))), size: scope.get('@accu')?.size ?? 1 };
    case 'call':
    case 'rcall':
      return call(node, scope, state);
    default: {
      const parts = expandedChildren(node).map((c) => sub(c));
      const counted = BINARY.has(op) ? 1 : 0;
      const total = sum(parts, counted);
      // `a + b` can be as large as both; `x ? a : b` as either; the rest are scalars.
      if (op === '+') return { ...total, size: parts[0].size + parts[1].size };
      if (op === '?:') return { ...total, size: Math.max(parts[1].size, parts[2].size), data: parts[1].data || parts[2].data };
      return total;
    }
  }
}

function comprehension(c: ComprehensionArgs, scope: Scope, state: { dataDependent: boolean }): Estimate {
  const range = estimate(c.iterable, scope, state);
  if (range.data) state.dataDependent = true;
  const init = estimate(c.init, scope, state);
  const inner = new Map(scope);
  // The iteration variable: an element of the range, no larger than the range.
  inner.set(iterVarName(c), { cost: 0, size: range.size, data: range.data });
  // map()/filter() accumulate at most one element per iteration.
  inner.set('@accu', { cost: 0, size: range.size, data: range.data });
  const step = estimate(c.step, inner, state);
  const perIteration = nodeCount(c.step) + step.cost;
  const producesList = c.kind !== 'quantifier' && (c.init.op as string) === 'list';
  return {
    cost: range.cost + init.cost + range.size * perIteration,
    size: producesList ? range.size : 1,
    data: range.data,
  };
}

function iterVarName(c: ComprehensionArgs): string {
  return (c as unknown as { iterVarName: string }).iterVarName;
}

function call(node: ASTNode, scope: Scope, state: { dataDependent: boolean }): Estimate {
  const name = (node.args as unknown as [string])[0];
  if (name === 'bind' && raw(node).meta.macro !== undefined) return bind(node, scope, state);
  const parts = expandedChildren(node).map((c) => estimate(c, scope, state));
  const total = sum(parts, 1);
  const largest = parts.reduce((m, p) => (p.size > m.size ? p : m), SMALL);
  switch (name) {
    case 'json':
      // A JSON value has at most one element per two bytes of its text.
      return { ...total, size: Math.ceil(largest.size / 2), data: largest.data };
    case 'split':
      return { ...total, size: (parts[0]?.size ?? 1) + 1, data: parts[0]?.data ?? false };
    case 'findAll':
      return { ...total, size: (parts[0]?.size ?? 1) + 1, data: parts[0]?.data ?? false };
    case 'size':
    case 'matches':
    case 'startsWith':
    case 'endsWith':
    case 'contains':
    case 'has':
      return { ...total, size: 1 };
    default:
      return { ...total, size: largest.size, data: largest.data };
  }
}

/** `cel.bind(v, value, body)`: the body sees `v` with the value's size. */
function bind(node: ASTNode, scope: Scope, state: { dataDependent: boolean }): Estimate {
  const [variable, value, body] = (node.args as unknown as [string, ASTNode, ASTNode[]])[2];
  const bound = estimate(value, scope, state);
  const inner = new Map(scope);
  if (variable.op === 'id') inner.set(variable.args, { cost: 0, size: bound.size, data: bound.data });
  const result = estimate(body, inner, state);
  return { ...result, cost: bound.cost + result.cost + 1 };
}
