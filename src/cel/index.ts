/**
 * The CEL environment shared by every feature that takes an expression. See docs/cel.md.
 *
 *   const r = compile('source.address.startsWith("10.")', { expect: ['bool'] })   // config time
 *   if (!r.ok) → status condition with r.error.message / r.error.position
 *   const act = createActivation({ request, source, jwt })                     // per request
 *   evalBool(r.program, act)                                                   // true | false | 'error'
 */
export { compile, referencesBody, referencesResponseBody, MAX_EXPRESSION_LENGTH, Program } from './compile.ts';
export type { CelCompileError, CelEvalError, CompileOptions, CompileResult, EvalResult, SourcePosition } from './compile.ts';
export { createActivation, headerMap } from './activation.ts';
export type {
  A2aInput, Activation, ApiKeyInput, BodyInput, CelInput, HeaderInput, LlmInput, McpInput, McpItemInput, NamedInput,
  RequestInput, ResponseInput, SourceInput,
} from './activation.ts';
export { evalBody, evalBool, evalNumber, evalString, evalValue } from './evaluate.ts';
export { attributeValue, authorize, conditionHolds, metricLabel, ruleMatches, UNKNOWN_LABEL } from './failure.ts';
export type { AuthorizationAction, AuthorizationDecision, AuthorizationRule } from './failure.ts';
export { VARIABLE_NAMES, VARIABLES } from './environment.ts';
export type { VariableName } from './environment.ts';
export type { CelValue, JsonValue } from './values.ts';
export { DATA_SIZE_BOUNDS, RUNTIME_COST_BUDGET, SIZE_UNIT, STATIC_COST_BUDGET } from './cost-limits.ts';
export { COST_LIMIT_CODE } from './runtime-budget.ts';
