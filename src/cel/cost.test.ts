import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { estimateCost } from './cost-estimate.ts';
import { RUNTIME_COST_BUDGET, STATIC_COST_BUDGET } from './cost-limits.ts';
import { environment } from './environment.ts';
import { compile, createActivation } from './index.ts';
import type { Activation } from './index.ts';
import { COST_LIMIT_CODE, lastEvaluationCost } from './runtime-budget.ts';

const list = (n: number): string => `[${Array.from({ length: n }, (_, i) => i).join(',')}]`;
const nested = (macro: string, depth: number, n: number, body: string): string => {
  let expr = body;
  for (let d = depth - 1; d >= 0; d--) expr = `${list(n)}.${macro}(v${d}, ${expr})`;
  return expr;
};
const estimate = (expr: string): ReturnType<typeof estimateCost> => {
  const parsed = environment.parse(expr);
  const checked = parsed.check();
  assert.ok(checked.valid, expr);
  return estimateCost(parsed.ast);
};

function activation(headers: Record<string, string>, body?: string): Activation {
  return createActivation({ request: { method: 'POST', url: '/x', headers, body }, source: { address: '10.0.0.1', port: 1 } });
}

/** A comma-separated header of `n` equal-length items: request data the static estimate cannot know. */
const items = (n: number): string => Array.from({ length: n }, (_, i) => `i${String(i).padStart(6, '0')}`).join(',');

describe('static cost estimate refuses over-budget expressions at compile time', () => {
  const refused: { name: string; expr: string }[] = [
    { name: 'eight nested all() over ten elements (the security review case)', expr: nested('all', 8, 10, 'v7 >= 0') },
    { name: 'eight nested map() over ten elements', expr: `size(${nested('map', 8, 10, 'v7')}) > 0` },
    { name: 'nested exists() over request data', expr: "request.headers['a'].split(',').exists(x, request.headers['b'].split(',').exists(y, x == y))" },
    { name: 'filter() inside all() over the body', expr: 'json(request.body).a.all(x, json(request.body).b.filter(y, y == x).size() > 0)' },
  ];
  for (const c of refused) {
    it(c.name, () => {
      const r = compile(c.expr, { expect: ['bool'] });
      assert.equal(r.ok, false);
      if (r.ok) return;
      assert.ok(r.error.cost, 'a cost failure');
      assert.ok(r.error.cost.estimate > r.error.cost.budget);
      assert.match(r.error.message, /^estimated cost [\d,]+ exceeds the budget of [\d,]+ /);
    });
  }

  const accepted: { name: string; expr: string }[] = [
    { name: 'a plain comparison', expr: 'request.method == "GET"' },
    { name: 'one loop over a header', expr: "request.headers['x-groups'].split(',').exists(g, g == 'admin')" },
    { name: 'one loop over the body', expr: 'json(request.body).messages.all(m, m.role != "system")' },
    { name: 'one loop over JWT claims', expr: 'jwt.groups.exists(g, g in ["admin", "ops"])' },
    { name: 'three nested loops over ten literals', expr: nested('all', 3, 10, 'v2 >= 0') },
    { name: 'a bind', expr: 'cel.bind(p, request.path, p.startsWith("/v1/") || p.startsWith("/v2/"))' },
  ];
  for (const c of accepted) {
    it(`accepts ${c.name}`, () => {
      const r = compile(c.expr, { expect: ['bool'] });
      assert.ok(r.ok, r.ok ? '' : r.error.message);
    });
  }

  it('literal-only loops are held to the runtime budget, just under and just over', () => {
    const expr = (n: number): string => `${list(n)}.all(a, ${list(n)}.all(b, a != b || a == b))`;
    // The estimate grows with n; find the last n that fits.
    let n = 10;
    while (estimate(expr(n + 1)).cost <= RUNTIME_COST_BUDGET) n++;
    assert.equal(estimate(expr(n)).dataDependent, false);
    assert.ok(compile(expr(n)).ok, `n=${n} is under the budget`);
    const over = compile(expr(n + 1));
    assert.equal(over.ok, false);
    assert.equal(over.ok ? undefined : over.error.cost?.budget, RUNTIME_COST_BUDGET);
  });

  it('loops over request data are held to the static budget', () => {
    const e = estimate("request.headers['x'].split(',').all(a, a != '')");
    assert.equal(e.dataDependent, true);
    assert.ok(e.cost > 0 && e.cost < STATIC_COST_BUDGET, String(e.cost));
  });

  it('nesting multiplies', () => {
    const one = estimate(nested('all', 1, 10, 'v0 >= 0')).cost;
    const two = estimate(nested('all', 2, 10, 'v1 >= 0')).cost;
    assert.ok(two > 9 * one, `${one} → ${two}`);
  });
});

describe('runtime budget stops an evaluation that runs long or grows', () => {
  const hostile: { name: string; expr: string; headers?: Record<string, string>; body?: string }[] = [
    {
      name: 'all() over a header list with a nested all() over literals',
      expr: `request.headers['a'].split(',').all(x, ${list(10)}.all(y, x != string(y)))`,
      headers: { a: items(30_000) },
    },
    {
      name: 'all() over the body that re-reads the body on every element (quadratic)',
      expr: 'json(request.body).a.all(x, x in json(request.body).a)',
      body: JSON.stringify({ a: Array.from({ length: 20_000 }, (_, i) => i) }),
    },
    {
      name: 'map() over the body building a copy of the body per element (quadratic memory)',
      expr: 'size(json(request.body).a.map(x, json(request.body).a)) > 0',
      body: JSON.stringify({ a: Array.from({ length: 20_000 }, (_, i) => i) }),
    },
    {
      name: 'string doubling with bind',
      expr: `${'cel.bind(s, s + s, '.repeat(40)}s.size() > 0${')'.repeat(40)}`.replace('cel.bind(s, s + s, ', "cel.bind(s, request.headers['a'], "),
      headers: { a: 'ab' },
    },
    {
      name: 'list doubling with bind',
      expr: `${'cel.bind(l, l + l, '.repeat(40)}size(l) > 0${')'.repeat(40)}`.replace('cel.bind(l, l + l, ', "cel.bind(l, request.headers['a'].split(','), "),
      headers: { a: 'a,b' },
    },
    {
      name: 'a shared list serialised (exponential as a tree)',
      expr: `${'cel.bind(l, [l, l], '.repeat(40)}toJson(l).size() > 0${')'.repeat(40)}`.replace('cel.bind(l, [l, l], ', "cel.bind(l, [request.path], "),
    },
    {
      name: 'replace() with an empty search string and a long replacement',
      expr: "request.headers['a'].replace('', request.headers['a']).size() > 0",
      headers: { a: 'x'.repeat(20_000) },
    },
    {
      name: 'join() with a long separator',
      expr: "request.headers['a'].split(',').join(request.headers['b']).size() > 0",
      headers: { a: ','.repeat(20_000), b: 'y'.repeat(20_000) },
    },
    {
      name: 'regexReplace() with a long replacement',
      expr: "regexReplace(request.headers['a'], 'x', request.headers['a']).size() > 0",
      headers: { a: 'x'.repeat(20_000) },
    },
    {
      name: 'matches() of the body inside a loop over the body',
      expr: "json(request.body).a.all(x, string(request.body).matches('[0-9]+'))",
      body: JSON.stringify({ a: Array.from({ length: 20_000 }, (_, i) => i) }),
    },
  ];
  for (const c of hostile) {
    it(c.name, () => {
      const r = compile(c.expr, { expect: ['bool'] });
      assert.ok(r.ok, r.ok ? '' : r.error.message);
      const started = performance.now();
      const result = r.program.evaluate(activation(c.headers ?? {}, c.body));
      const ms = performance.now() - started;
      assert.equal(result.ok, false);
      assert.equal(result.ok ? undefined : result.error.code, COST_LIMIT_CODE);
      assert.ok(ms < 1000, `stopped after ${Math.round(ms)} ms`);
    });
  }

  it('just under and just over the budget', () => {
    const r = compile("request.headers['a'].split(',').all(x, x.startsWith('i'))");
    assert.ok(r.ok);
    // Cost grows linearly with the number of items: measure it, then go to either side of the budget.
    assert.equal(r.program.evaluate(activation({ a: items(1000) }), 1e15).ok, true);
    const perItem = lastEvaluationCost() / 1000;
    const under = Math.floor((RUNTIME_COST_BUDGET * 0.95) / perItem);
    const over = Math.ceil((RUNTIME_COST_BUDGET * 1.05) / perItem);
    const ok = r.program.evaluate(activation({ a: items(under) }));
    assert.deepEqual(ok, { ok: true, value: true });
    const refused = r.program.evaluate(activation({ a: items(over) }));
    assert.equal(refused.ok ? undefined : refused.error.code, COST_LIMIT_CODE);
  });

  it('an error absorbed by || still fails the evaluation once the budget is gone', () => {
    const r = compile('json(request.body).a.all(x, x in json(request.body).a) || true');
    assert.ok(r.ok, r.ok ? '' : r.error.message);
    const result = r.program.evaluate(activation({}, JSON.stringify({ a: Array.from({ length: 20_000 }, (_, i) => i) })));
    assert.equal(result.ok ? undefined : result.error.code, COST_LIMIT_CODE);
  });

  it('each evaluation gets a fresh budget', () => {
    const r = compile("request.headers['a'].split(',').all(x, x.startsWith('i'))");
    assert.ok(r.ok);
    const act = activation({ a: items(30_000) });
    for (let i = 0; i < 5; i++) assert.deepEqual(r.program.evaluate(act), { ok: true, value: true });
  });

  it('ordinary expressions cost a few units', () => {
    const r = compile('request.method == "POST" && request.headers["x-team"] == "research"');
    assert.ok(r.ok);
    assert.deepEqual(r.program.evaluate(activation({ 'x-team': 'research' })), { ok: true, value: true });
    assert.ok(lastEvaluationCost() < 10, String(lastEvaluationCost()));
  });
});
