import { environment } from './environment.ts';
import type { Activation } from './activation.ts';
import { routeMatchesToRe2 } from './functions/regex.ts';
import { collectReferences, referencesPath } from './references.ts';
import { estimateCost } from './cost-estimate.ts';
import { RUNTIME_COST_BUDGET, STATIC_COST_BUDGET } from './cost-limits.ts';
import { instrument } from './instrument.ts';
import { charge, enter, finish, leave, sizeCost } from './runtime-budget.ts';
import type { CelValue } from './values.ts';

/**
 * Compile once (at config time, cached by expression text), evaluate many times (per request).
 * Neither step throws for a user's mistake: compile returns a positioned error for the policy's
 * status, evaluate returns a typed failure the caller resolves by SPEC.md's rules (failure.ts).
 */

/** SPEC.md: a CELExpression is 1..16384 characters. */
export const MAX_EXPRESSION_LENGTH = 16384;

/** Where in the expression an error is: 0-based offsets, 1-based line and column. */
export interface SourcePosition {
  offset: number;
  end: number;
  line: number;
  column: number;
}

export interface CelCompileError {
  message: string;
  position?: SourcePosition;
  /** Set when the expression is valid but its estimated worst-case cost is over budget (docs/cel.md "Cost limits"). */
  cost?: { estimate: number; budget: number };
}

export interface CelEvalError {
  /** The library's error code, e.g. `no_such_key`, `no_matching_overload`, `invalid_regular_expression`. */
  code: string;
  message: string;
}

export type EvalResult<T = CelValue> = { ok: true; value: T } | { ok: false; error: CelEvalError };

export interface CompileOptions {
  /**
   * CEL types the result may have (`bool`, `string`, `int`, `double`, `bytes`, `map`, `list`,
   * `google.protobuf.Duration` …). An expression whose checked type is none of them (and not
   * `dyn`) is a compile error: `request.path` as an authorization rule is caught at config time.
   */
  expect?: readonly string[];
}

export type CompileResult = { ok: true; program: Program } | { ok: false; error: CelCompileError };

type Evaluate = (activation: Activation) => unknown;

export class Program {
  readonly expression: string;
  /** The checked result type (`dyn` when only known at run time). */
  readonly resultType: string;
  /** Dotted paths of the variables the expression reads (see references.ts). */
  readonly references: ReadonlySet<string>;
  readonly #run: Evaluate;

  constructor(expression: string, resultType: string, references: ReadonlySet<string>, run: Evaluate) {
    this.expression = expression;
    this.resultType = resultType;
    this.references = references;
    this.#run = run;
    Object.freeze(this);
  }

  /**
   * Evaluates against an activation with a fresh runtime budget (RUNTIME_COST_BUDGET); never
   * throws. The result's size is paid for too, since callers go on to serialise it.
   */
  evaluate(activation: Activation, budget: number = RUNTIME_COST_BUDGET): EvalResult {
    // enter/leave rather than metered(): no closure per evaluation on the request path.
    const outer = enter(budget);
    try {
      const value = this.#run(activation);
      charge(sizeCost(value));
      finish();
      if (value === undefined) return { ok: false, error: { code: 'no_value', message: 'expression produced no value' } };
      return { ok: true, value };
    } catch (err) {
      return { ok: false, error: toEvalError(err) };
    } finally {
      leave(outer, budget);
    }
  }

  /** Whether the expression reads `path` (or something containing or below it). */
  uses(path: string): boolean {
    return referencesPath(this.references, path);
  }
}

function toEvalError(err: unknown): CelEvalError {
  if (err instanceof Error) {
    const summary = (err as { summary?: unknown }).summary;
    const code = (err as { code?: unknown }).code;
    return { code: typeof code === 'string' ? code : 'internal', message: typeof summary === 'string' ? summary : err.message };
  }
  return { code: 'internal', message: String(err) };
}

/** Whether the request body must be buffered before this expression can run (`a2a.*` is read from it). */
export function referencesBody(program: Program): boolean {
  return program.uses('request.body') || program.uses('a2a');
}

export function referencesResponseBody(program: Program): boolean {
  return program.uses('response.body');
}

const MAX_CACHED_PROGRAMS = 4096;
const cache = new Map<string, CompileResult>();

export function compile(expression: string, options: CompileOptions = {}): CompileResult {
  const key = `${options.expect?.join(',') ?? ''}\n${expression}`;
  const hit = cache.get(key);
  if (hit !== undefined) return hit;
  const result = compileUncached(expression, options);
  if (cache.size >= MAX_CACHED_PROGRAMS) cache.delete(cache.keys().next().value as string);
  cache.set(key, result);
  return result;
}

function failure(expression: string, message: string, range?: { start: number; end: number }): CompileResult {
  return { ok: false, error: { message, position: range ? positionOf(expression, range) : undefined } };
}

function positionOf(expression: string, range: { start: number; end: number }): SourcePosition {
  const before = expression.slice(0, range.start);
  const lineStart = before.lastIndexOf('\n') + 1;
  return { offset: range.start, end: range.end, line: before.split('\n').length, column: range.start - lineStart + 1 };
}

function errorRange(err: unknown): { start: number; end: number } | undefined {
  const range = (err as { range?: { start?: unknown; end?: unknown } }).range;
  return typeof range?.start === 'number' && typeof range.end === 'number' ? { start: range.start, end: range.end } : undefined;
}

function errorSummary(err: unknown): string {
  const summary = (err as { summary?: unknown }).summary;
  if (typeof summary === 'string') return summary;
  return err instanceof Error ? err.message : String(err);
}

function typeAllowed(actual: string, expected: readonly string[]): boolean {
  return actual === 'dyn' || expected.some((e) => actual === e || actual.startsWith(`${e}<`));
}

/**
 * An expression whose loops all run over literals always costs about its estimate, so it must fit
 * the per-evaluation budget; one that loops over request data is refused only when even the
 * largest request could not make it fit the static budget (the runtime budget bounds the rest).
 */
function costFailure(expression: string, ast: Parameters<typeof estimateCost>[0]): CompileResult | undefined {
  const estimate = estimateCost(ast);
  const budget = estimate.dataDependent ? STATIC_COST_BUDGET : RUNTIME_COST_BUDGET;
  if (estimate.cost <= budget) return undefined;
  const basis = estimate.dataDependent ? 'for the largest request the gateway accepts' : 'on every request';
  return {
    ok: false,
    error: {
      message: `estimated cost ${formatCost(estimate.cost)} exceeds the budget of ${formatCost(budget)} ${basis} (docs/cel.md "Cost limits")`,
      position: positionOf(expression, { start: 0, end: expression.length }),
      cost: { estimate: estimate.cost, budget },
    },
  };
}

function formatCost(n: number): string {
  return n >= 1e15 ? n.toExponential(2) : Math.round(n).toLocaleString('en-US');
}

function compileUncached(expression: string, options: CompileOptions): CompileResult {
  if (expression.length === 0 || expression.length > MAX_EXPRESSION_LENGTH) {
    return failure(expression, `expression length must be 1..${MAX_EXPRESSION_LENGTH} characters, got ${expression.length}`);
  }
  let parsed: ReturnType<typeof environment.parse>;
  try {
    parsed = environment.parse(expression);
  } catch (err) {
    return failure(expression, errorSummary(err), errorRange(err));
  }
  const badPattern = routeMatchesToRe2(parsed.ast);
  if (badPattern !== undefined) return failure(expression, badPattern.message, badPattern.node.range);
  const checked = parsed.check();
  if (!checked.valid) return failure(expression, errorSummary(checked.error), errorRange(checked.error));
  const resultType = checked.type ?? 'dyn';
  if (options.expect !== undefined && !typeAllowed(resultType, options.expect)) {
    return failure(expression, `expression must produce ${options.expect.join(' or ')}, but produces ${resultType}`, { start: 0, end: expression.length });
  }
  const overBudget = costFailure(expression, parsed.ast);
  if (overBudget !== undefined) return overBudget;
  instrument(parsed.ast);
  return { ok: true, program: new Program(expression, resultType, collectReferences(parsed.ast), parsed) };
}
