import { EvaluationError } from '@marcbachmann/cel-js';
import type { ASTNode } from '@marcbachmann/cel-js';

/**
 * The few pieces of @marcbachmann/cel-js that its typings leave out but its macro API relies on:
 * AST nodes carry `setMeta`, and macro hooks receive the type checker or evaluator. Kept in one
 * file so an upgrade of the library has one place to look.
 */

export interface CelType {
  readonly name: string;
  readonly kind: string;
}

export interface TypeCheckerLike {
  check(node: ASTNode, ctx: unknown): CelType;
  getType(name: string): CelType;
  createError(code: string, message: string, node?: ASTNode): Error;
}

export interface EvaluatorLike {
  run(node: ASTNode, ctx: unknown): unknown;
}

/** A macro as the library expects it: type-checked at compile time, evaluated per request. */
export interface MacroHooks {
  typeCheck(checker: TypeCheckerLike, macro: MacroHooks, ctx: unknown): CelType;
  evaluate(evaluator: EvaluatorLike, macro: MacroHooks, ctx: unknown): unknown;
  async: false;
}

interface MutableNode {
  setMeta(key: string, value: unknown): MutableNode;
}

/** Replaces how one parsed call node is checked and evaluated (must run before type checking). */
export function overrideCall(node: ASTNode, hooks: MacroHooks): void {
  (node as unknown as MutableNode).setMeta('macro', hooks).setMeta('async', false);
}

/** Errors thrown from our functions must be EvaluationErrors so `||`/`&&` can absorb them as CEL says. */
export function celError(code: string, message: string): EvaluationError {
  return new EvaluationError({ code, message });
}

/** Visits every node of a parsed expression, parents before children. */
export function walk(node: ASTNode, visit: (node: ASTNode) => void): void {
  visit(node);
  for (const child of children(node)) walk(child, visit);
}

export function children(node: ASTNode): ASTNode[] {
  switch (node.op) {
    case 'value':
    case 'id':
      return [];
    case '.':
    case '.?':
      return [node.args[0]];
    case 'call':
      return node.args[1];
    case 'rcall':
      return [node.args[1], ...node.args[2]];
    case 'list':
      return node.args;
    case 'map':
      return node.args.flat();
    case '!_':
    case '-_':
      return [node.args];
    default:
      return node.args as ASTNode[];
  }
}

/**
 * A node as the library holds it after type checking, for the cost meter (instrument.ts): a
 * macro call (`all`, `exists`, `map` …) keeps its parsed form and carries the expanded
 * comprehension as `meta.alternate`; operators and calls carry the `handle` their evaluation
 * calls with the evaluated operands.
 */
export interface RawNode {
  readonly op: string;
  readonly args: unknown;
  readonly meta: { alternate?: RawNode; macro?: unknown };
  handle?: (...args: unknown[]) => unknown;
  evaluate: (evaluator: unknown, node: RawNode, ctx: unknown) => unknown;
}

/** The parts of a comprehension node (the expansion of a macro such as `all` or `map`). */
export interface ComprehensionArgs {
  iterable: ASTNode;
  init: ASTNode;
  step: ASTNode;
  kind?: string;
}

export function raw(node: ASTNode): RawNode {
  return node as unknown as RawNode;
}

/** The children of a node, with a macro call's expansion in place of its parsed arguments. */
export function expandedChildren(node: ASTNode): ASTNode[] {
  const alternate = raw(node).meta.alternate;
  if (alternate !== undefined) return [alternate as unknown as ASTNode];
  if ((node.op as string) === 'comprehension') {
    const c = node.args as unknown as ComprehensionArgs;
    return [c.iterable, c.init, c.step];
  }
  if ((node.op as string) === 'accuPush') return [node.args as unknown as ASTNode];
  if ((node.op as string) === 'accuValue' || (node.op as string) === 'accuInc') return [];
  return children(node);
}
