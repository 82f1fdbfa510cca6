/**
 * Fuzz target for CEL (src/cel): the bytes are an expression as a policy author (or an attacker
 * who controls configuration) would write it. It is compiled with the project's environment — which
 * parses, type-checks and estimates its cost — and, when accepted, evaluated against a sample
 * request with the runtime budget, the way the proxy would, then converted the way features consume
 * results. Returns for any input; throws only on a defect: compile or evaluate throwing (both
 * promise never to), an evaluation that runs long (the budget stops work at about 60 ms), an
 * accepted expression whose estimate is over budget, or an evaluation error that is an unexpected
 * JavaScript exception rather than a CEL error.
 */
import { compile, createActivation, evalValue } from '../src/cel/index.ts';
import type { Activation, CompileResult, EvalResult } from '../src/cel/index.ts';

/** Far above what the runtime budget allows (RUNTIME_COST_BUDGET is about 60 ms of work). */
const MAX_EVALUATION_MS = 1_500;

/**
 * Codes an evaluation may fail with on a well-formed expression: the library's and ours. `internal`
 * (a JavaScript exception the evaluator did not turn into a CEL error) is not among them, except a
 * stack overflow from a deeply nested value, which the evaluation still reports as a failure.
 */
function expectedFailure(result: EvalResult<unknown>): boolean {
  if (result.ok) return true;
  if (result.error.code !== 'internal') return true;
  return /call stack|Invalid string length|Invalid array length/i.test(result.error.message);
}

let sample: Activation | undefined;
/** A request with a little of everything: headers, a JSON body, claims, a source address. */
function activation(): Activation {
  sample ??= createActivation({
    request: {
      method: 'POST', url: '/v1/chat/completions?x=1&y=2', host: 'api.example.com', scheme: 'https',
      headers: { authorization: 'Bearer t', 'x-team': 'research', 'x-groups': 'a,b,c,admin', 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'gpt-4o', messages: [{ role: 'user', content: 'hi' }, { role: 'system', content: 'be brief' }], n: 2 }),
    },
    source: { address: '10.1.2.3', port: 40000 },
    jwt: { sub: 'user-1', groups: ['admin', 'dev'], exp: 1760000000, nested: { a: [1, 2, { b: 'c' }] } },
  });
  return sample;
}

export function fuzz(data: Buffer): void {
  const source = data.toString('utf8');
  for (const expect of [undefined, ['bool']]) {
    let compiled: CompileResult;
    try {
      compiled = compile(source, expect === undefined ? {} : { expect });
    } catch (err) {
      throw new Error(`compile threw for ${JSON.stringify(source)}`, { cause: err });
    }
    if (!compiled.ok) {
      if (typeof compiled.error.message !== 'string' || compiled.error.message === '') throw new Error(`compile failed without a message for ${JSON.stringify(source)}`);
      if (compiled.error.cost !== undefined && !(compiled.error.cost.estimate > compiled.error.cost.budget)) {
        throw new Error(`refused for cost under budget: ${JSON.stringify(compiled.error)}`);
      }
      continue;
    }
    const started = performance.now();
    let result: EvalResult<unknown>;
    try {
      result = evalValue(compiled.program, activation());
    } catch (err) {
      throw new Error(`evaluation threw for ${JSON.stringify(source)}`, { cause: err });
    }
    const ms = performance.now() - started;
    if (ms > MAX_EVALUATION_MS) throw new Error(`evaluation of ${JSON.stringify(source)} took ${Math.round(ms)} ms`);
    if (!expectedFailure(result)) throw new Error(`evaluation of ${JSON.stringify(source)} failed with an unexpected exception: ${JSON.stringify(result)}`);
  }
}
