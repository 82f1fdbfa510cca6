import type { ASTNode } from '@marcbachmann/cel-js';
import { expandedChildren, raw } from './cel-internals.ts';
import type { ComprehensionArgs, RawNode } from './cel-internals.ts';
import { SIZE_UNIT } from './cost-limits.ts';
import { charge, sizeCost } from './runtime-budget.ts';

/**
 * Makes a type-checked expression count its work against the runtime budget (runtime-budget.ts).
 * Only the places where work can grow are counted, so a plain comparison pays one call:
 *
 * - each comprehension iteration (`all`, `exists`, `exists_one`, `map`, `filter`) costs the
 *   number of nodes in its body, charged before the body runs — nesting multiplies, and a list
 *   built by `map()` grows by at most one element per charged iteration;
 * - each operator and function call costs 1 plus the sizes of its operands, charged before it
 *   runs, plus the size of its result after (so `s + s` doubling and list concatenation are
 *   paid for as they grow); `join` pays for its output before it runs, since a long separator
 *   makes the output larger than the inputs.
 *
 * Literals, variables, field access and the logical operators are not counted: each runs once per
 * enclosing iteration, which is already paid for.
 */

const BINARY = new Set(['==', '!=', 'in', '+', '-', '*', '/', '%', '<', '<=', '>', '>=']);

type Handle = (...args: unknown[]) => unknown;

/** Instruments `ast` in place. Must run after type checking, which installs the handles. */
export function instrument(ast: ASTNode): void {
  visit(ast);
}

function visit(node: ASTNode): void {
  const r = raw(node);
  const op = node.op as string;
  if (op === 'comprehension') meterIterations(node.args as unknown as ComprehensionArgs);
  else if (r.meta.alternate === undefined && r.meta.macro === undefined && typeof r.handle === 'function') {
    if (BINARY.has(op)) r.handle = meteredBinary(r.handle);
    else if (op === 'call') r.handle = meteredCall(r.handle);
    else if (op === 'rcall') r.handle = meteredMethod(r.handle, (node.args as unknown as [string])[0]);
  }
  for (const child of expandedChildren(node)) visit(child);
}

/** Nodes in a subtree, comprehension expansions included: the static part of one iteration's work. */
export function nodeCount(node: ASTNode): number {
  let n = 1;
  for (const child of expandedChildren(node)) n += nodeCount(child);
  return n;
}

function meterIterations(comprehension: ComprehensionArgs): void {
  const step = raw(comprehension.step);
  const cost = nodeCount(comprehension.step);
  const run = resolvedEvaluate(step);
  step.evaluate = function meteredStep(ev, node, ctx) {
    charge(cost);
    return run(ev, node, ctx);
  };
}

/**
 * A node's own evaluation. ASTNode.evaluate replaces itself on first call by the implementation
 * its metadata names; an own property set here would be overwritten by that, so resolve it now.
 */
function resolvedEvaluate(node: RawNode): RawNode['evaluate'] {
  const meta = node.meta as { alternate?: RawNode; macro?: { evaluate: (ev: unknown, m: unknown, ctx: unknown) => unknown }; evaluate?: RawNode['evaluate'] };
  const alternate = meta.alternate;
  if (alternate !== undefined) return (ev, _node, ctx) => alternate.evaluate(ev, alternate, ctx);
  const macro = meta.macro;
  if (macro !== undefined) return (ev, _node, ctx) => macro.evaluate(ev, macro, ctx);
  const own = meta.evaluate;
  if (own === undefined) throw new Error(`CEL node ${node.op} has no evaluation`);
  return own;
}

function meteredBinary(handle: Handle): Handle {
  return function meteredOperator(left, right, node, ev) {
    charge(1 + sizeCost(left) + sizeCost(right));
    const out = handle(left, right, node, ev);
    charge(sizeCost(out));
    return out;
  };
}

function argumentsCost(args: unknown): number {
  let cost = 1;
  if (Array.isArray(args)) for (const a of args as unknown[]) cost += sizeCost(a);
  return cost;
}

function meteredCall(handle: Handle): Handle {
  return function meteredFunction(args, node, ev) {
    charge(argumentsCost(args));
    const out = handle(args, node, ev);
    charge(sizeCost(out));
    return out;
  };
}

function meteredMethod(handle: Handle, name: string): Handle {
  const before = name === 'join' ? joinOutputCost : argumentsCost;
  return function meteredMethodCall(args, ev, node) {
    charge(before(args));
    const out = handle(args, ev, node);
    charge(sizeCost(out));
    return out;
  };
}

/** `list.join(sep)`: the separator is copied between every two elements. */
function joinOutputCost(args: unknown): number {
  const [list, separator] = args as [unknown, unknown];
  const count = Array.isArray(list) ? list.length : 0;
  const sepLength = typeof separator === 'string' ? separator.length : 0;
  return argumentsCost(args) + (Math.max(0, count - 1) * sepLength) / SIZE_UNIT;
}
