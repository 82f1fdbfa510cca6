import type { ASTNode, Environment } from '@marcbachmann/cel-js';
import { celError, overrideCall, walk } from '../cel-internals.ts';
import type { CelType, EvaluatorLike, MacroHooks, TypeCheckerLike } from '../cel-internals.ts';
import { compileRegex, RegexError, regexFind, regexFindAll, regexReplaceAll, regexTest } from '../regex-cache.ts';
import { chargeChars } from '../runtime-budget.ts';

/**
 * Regular expressions in CEL, all on re2js (linear time, RE2 syntax).
 *
 * The library's built-in `string.matches` uses JavaScript RegExp, which backtracks exponentially
 * on patterns like `^(a+)+$`. Its registry refuses a second `matches` overload, so every parsed
 * `x.matches(p)` node is re-pointed at the RE2 implementation before type checking
 * (`routeMatchesToRe2`). The global form `matches(x, p)` and the other functions are registered
 * normally.
 */

function guard<T>(fn: () => T): T {
  try {
    return fn();
  } catch (err) {
    if (err instanceof RegexError) throw celError('invalid_regular_expression', err.message);
    throw err;
  }
}

function nonNegativeLimit(limit: bigint): number {
  return limit < 0n ? -1 : Number(limit);
}

export function registerRegexFunctions(env: Environment): void {
  env.registerFunction('matches(string, string): bool', (s: string, p: string) => guard(() => regexTest(s, p)), {
    description: 'True when the RE2 pattern matches part of the string (anchor with ^ and $).',
  });
  // Kubernetes CEL regex library names.
  env.registerFunction('string.find(string): string', (s: string, p: string) => guard(() => regexFind(s, p) ?? ''), {
    description: 'The first match of the RE2 pattern, or "" when there is none.',
  });
  env.registerFunction('string.findAll(string): list<string>', (s: string, p: string) => guard(() => regexFindAll(s, p)), {
    description: 'All non-overlapping matches of the RE2 pattern.',
  });
  env.registerFunction('string.findAll(string, int): list<string>', (s: string, p: string, n: bigint) =>
    guard(() => regexFindAll(s, p, nonNegativeLimit(n))), {
    description: 'At most n matches of the RE2 pattern (n < 0: all).',
  });
  env.registerFunction('regexReplace(string, string, string): string', (s: string, p: string, r: string) =>
    guard(() => regexReplaceAll(s, p, r, chargeChars)), {
    description: 'Replaces every match of the RE2 pattern; $1 or ${name} in the replacement insert groups.',
  });
  env.registerFunction('string.regexReplace(string, string): string', (s: string, p: string, r: string) =>
    guard(() => regexReplaceAll(s, p, r, chargeChars)), {
    description: 'Method form of regexReplace.',
  });
}

function isStringLike(t: CelType): boolean {
  return t.name === 'string' || t.kind === 'dyn';
}

function matchesHooks(receiver: ASTNode, pattern: ASTNode, call: ASTNode): MacroHooks {
  return {
    async: false,
    typeCheck(checker: TypeCheckerLike, _macro: MacroHooks, ctx: unknown): CelType {
      const r = checker.check(receiver, ctx);
      const p = checker.check(pattern, ctx);
      if (!isStringLike(r) || !isStringLike(p)) {
        throw checker.createError('no_matching_overload', `found no matching overload for '${r.name}.matches(${p.name})'`, call);
      }
      return checker.getType('bool');
    },
    evaluate(evaluator: EvaluatorLike, _macro: MacroHooks, ctx: unknown): boolean {
      const s = evaluator.run(receiver, ctx);
      const p = evaluator.run(pattern, ctx);
      if (typeof s !== 'string' || typeof p !== 'string') {
        throw celError('no_matching_overload', "found no matching overload for 'matches' with non-string arguments");
      }
      // This call bypasses the metered call path (instrument.ts), so it pays for its scan here.
      chargeChars(s.length + p.length);
      return guard(() => regexTest(s, p));
    },
  };
}

/**
 * Sends every `x.matches(p)` in the expression to RE2. Returns the first literal pattern that does
 * not compile, so configuration with a bad regex is rejected at compile time, with its position.
 */
export function routeMatchesToRe2(ast: ASTNode): { message: string; node: ASTNode } | undefined {
  let invalid: { message: string; node: ASTNode } | undefined;
  walk(ast, (node) => {
    if (node.op === 'rcall' && node.args[0] === 'matches' && node.args[2].length === 1) {
      overrideCall(node, matchesHooks(node.args[1], node.args[2][0], node));
    }
    invalid ??= invalidLiteralPattern(node);
  });
  return invalid;
}

const PATTERN_ARGUMENT: Record<string, number> = { matches: 0, find: 0, findAll: 0, regexReplace: 0 };

function invalidLiteralPattern(node: ASTNode): { message: string; node: ASTNode } | undefined {
  let patternNode: ASTNode | undefined;
  if (node.op === 'rcall' && node.args[0] in PATTERN_ARGUMENT) patternNode = node.args[2][PATTERN_ARGUMENT[node.args[0]]];
  else if (node.op === 'call' && (node.args[0] === 'matches' || node.args[0] === 'regexReplace')) patternNode = node.args[1][1];
  if (patternNode?.op !== 'value' || typeof patternNode.args !== 'string') return undefined;
  const compiled = compileRegex(patternNode.args);
  return compiled.ok ? undefined : { message: compiled.message, node: patternNode };
}
