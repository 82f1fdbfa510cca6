/**
 * Hand-run measurement for docs/cel.md (not a test, not a benchmark suite):
 *   node src/cel/measure.ts
 * Prints evaluations per second of typical expressions against one reused activation.
 */
import { compile, createActivation, evalBool } from './index.ts';

const activation = createActivation({
  request: { method: 'POST', url: '/v1/chat/completions', host: 'api.example.com', headers: { authorization: 'Bearer x', 'x-team': 'research' } },
  source: { address: '10.1.2.3', port: 40000 },
  jwt: { sub: 'user-1', groups: ['admin', 'dev'], exp: 1760000000 },
});

const expressions = [
  'request.method == "GET"',
  'jwt.sub == "user-1" && "admin" in jwt.groups && request.path.startsWith("/v1/")',
  'request.headers["x-team"] == "research" && cidr("10.0.0.0/8").containsIP(source.address)',
  'request.path.matches("^/v1/(chat|embeddings)")',
  '"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa!".matches("^(a+)+$")',
];

const ITERATIONS = 500_000;
for (const expr of expressions) {
  const compiled = compile(expr);
  if (!compiled.ok) throw new Error(`${expr}: ${compiled.error.message}`);
  for (let i = 0; i < 50_000; i++) evalBool(compiled.program, activation);
  const start = process.hrtime.bigint();
  for (let i = 0; i < ITERATIONS; i++) evalBool(compiled.program, activation);
  const seconds = Number(process.hrtime.bigint() - start) / 1e9;
  console.log(`${Math.round(ITERATIONS / seconds).toLocaleString('en-US').padStart(12)} evals/s  ${expr}`);
}

// Per-request cost when the proxy builds a fresh activation and evaluates one rule on it.
const perRequest = compile('request.headers["x-team"] == "research"');
if (!perRequest.ok) throw new Error(perRequest.error.message);
const input = { request: { method: 'GET', url: '/v1/models?x=1', headers: { 'x-team': 'research', accept: '*/*', 'user-agent': 'curl' } }, source: { address: '10.1.2.3', port: 1 } };
const start = process.hrtime.bigint();
for (let i = 0; i < ITERATIONS; i++) evalBool(perRequest.program, createActivation(input));
const seconds = Number(process.hrtime.bigint() - start) / 1e9;
console.log(`${Math.round(ITERATIONS / seconds).toLocaleString('en-US').padStart(12)} /s       createActivation + one header rule`);
