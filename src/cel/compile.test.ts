import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { compile, MAX_EXPRESSION_LENGTH, referencesBody, referencesResponseBody } from './index.ts';
import type { SourcePosition } from './index.ts';

describe('compile errors carry positions', () => {
  const cases: { name: string; expr: string; message: RegExp; position?: Partial<SourcePosition> }[] = [
    { name: 'syntax error at end', expr: 'request.method ==', message: /Unexpected token/, position: { offset: 17, line: 1, column: 18 } },
    { name: 'syntax error on a later line', expr: 'request.method == "GET" &&\n  request.path ==', message: /Unexpected token/, position: { line: 2, column: 18 } },
    { name: 'unknown variable', expr: 'true && reqest.path == "/"', message: /reqest/, position: { offset: 8, column: 9 } },
    { name: 'type error', expr: '1 + "a"', message: /no such overload/, position: { offset: 0 } },
    { name: 'unknown function', expr: 'nosuch(1)', message: /nosuch/, position: { offset: 0 } },
    { name: 'invalid literal regex in matches', expr: 'request.path.matches("a(")', message: /invalid regular expression "a\("/, position: { offset: 21, end: 25 } },
    { name: 'invalid literal regex in global matches', expr: 'matches(request.path, "[")', message: /invalid regular expression/, position: { offset: 22 } },
    { name: 'invalid literal regex in regexReplace', expr: 'regexReplace(request.path, "*", "")', message: /invalid regular expression/, position: { offset: 27 } },
    { name: 'invalid literal regex in findAll', expr: 'request.path.findAll("(?P<x")', message: /invalid regular expression/ },
    { name: 'regex syntax RE2 lacks (lookbehind)', expr: '"ab".matches("(?<=a)b")', message: /invalid regular expression/ },
    { name: 'matches on a non-string', expr: '(1).matches("a")', message: /no matching overload/ },
    { name: 'empty expression', expr: '', message: /length must be 1\.\.16384/ },
    { name: 'too long', expr: `"${'a'.repeat(MAX_EXPRESSION_LENGTH)}"`, message: /length must be/ },
  ];
  for (const c of cases) {
    it(c.name, () => {
      const r = compile(c.expr);
      assert.equal(r.ok, false);
      if (r.ok) return;
      assert.match(r.error.message, c.message);
      if (c.position) {
        assert.ok(r.error.position, 'position expected');
        for (const [k, v] of Object.entries(c.position)) assert.equal(r.error.position[k as keyof SourcePosition], v, k);
      }
    });
  }
});

describe('compile options and cache', () => {
  it('returns the same program for the same text', () => {
    const a = compile('request.method == "GET"');
    const b = compile('request.method == "GET"');
    assert.ok(a.ok && b.ok);
    assert.equal(a.program, b.program);
  });

  const expectCases: { name: string; expr: string; expect: string[]; ok: boolean }[] = [
    { name: 'bool expected, bool given', expr: '1 < 2', expect: ['bool'], ok: true },
    { name: 'bool expected, string given', expr: '"yes"', expect: ['bool'], ok: false },
    { name: 'dyn passes until run time', expr: 'jwt.admin', expect: ['bool'], ok: true },
    { name: 'one of several', expr: '0.5', expect: ['double', 'bool'], ok: true },
    { name: 'list<string> is a list', expr: '["a"]', expect: ['list'], ok: true },
  ];
  for (const c of expectCases) {
    it(`expect: ${c.name}`, () => assert.equal(compile(c.expr, { expect: c.expect }).ok, c.ok));
  }

  it('the same text with different expectations is compiled separately', () => {
    assert.equal(compile('"x"').ok, true);
    assert.equal(compile('"x"', { expect: ['bool'] }).ok, false);
  });

  it('reports the checked result type', () => {
    const r = compile('size(request.path) > 3');
    assert.ok(r.ok);
    assert.equal(r.program.resultType, 'bool');
  });
});

describe('references', () => {
  const cases: { name: string; expr: string; refs: string[]; body: boolean; responseBody?: boolean }[] = [
    { name: 'plain field', expr: 'request.method == "GET"', refs: ['request.method'], body: false },
    { name: 'body via json()', expr: 'json(request.body).model == "x"', refs: ['request.body'], body: true },
    { name: 'body in has()', expr: 'has(request.body)', refs: ['request.body'], body: true },
    { name: 'body by string index', expr: 'size(request["body"]) > 0', refs: ['request.body'], body: true },
    { name: 'whole request counts as body', expr: 'toJson(request)', refs: ['request'], body: true },
    { name: 'dynamic index stops the path', expr: 'request.headers[jwt.h] == "1"', refs: ['request.headers', 'jwt.h'], body: false },
    { name: 'optional select', expr: 'request.?body.hasValue()', refs: ['request.body'], body: true },
    { name: 'headers are not body', expr: 'request.headers["x"] == "a"', refs: ['request.headers.x'], body: false },
    { name: 'inside a macro', expr: '[1].exists(i, size(request.body) > i)', refs: ['request.body'], body: true },
    { name: 'response body', expr: 'json(response.body).error == "x"', refs: ['response.body'], body: false, responseBody: true },
    { name: 'constants and locals are not variables', expr: '[1].map(x, base64.encode(string(x)))', refs: [], body: false },
    { name: 'several variables', expr: 'jwt.sub == apiKey.name || llm.totalTokens > 10', refs: ['jwt.sub', 'apiKey.name', 'llm.totalTokens'], body: false },
  ];
  for (const c of cases) {
    it(c.name, () => {
      const r = compile(c.expr);
      assert.ok(r.ok, r.ok ? '' : r.error.message);
      assert.deepEqual([...r.program.references].sort(), [...c.refs].sort());
      assert.equal(referencesBody(r.program), c.body);
      assert.equal(referencesResponseBody(r.program), c.responseBody ?? false);
    });
  }

  it('uses() answers for prefixes and fields below', () => {
    const r = compile('request.headers["x-a"] == "1"');
    assert.ok(r.ok);
    assert.equal(r.program.uses('request.headers'), true);
    assert.equal(r.program.uses('request'), true);
    assert.equal(r.program.uses('request.query'), false);
  });
});
