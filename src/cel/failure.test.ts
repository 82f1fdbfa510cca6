import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  attributeValue, authorize, compile, conditionHolds, createActivation, evalBody, evalBool, evalNumber, evalString, evalValue,
  metricLabel, UNKNOWN_LABEL,
} from './index.ts';
import type { AuthorizationAction, AuthorizationRule, Program } from './index.ts';

function program(expr: string): Program {
  const r = compile(expr);
  if (!r.ok) throw new Error(r.error.message);
  return r.program;
}

const activation = createActivation({
  request: { method: 'GET', url: '/admin', headers: { 'x-role': 'admin' } },
  jwt: { sub: 'u1', n: 7 },
});

// Always fails at run time: the JWT has no `missing` claim.
const FAILING = 'jwt.missing == "x"';

describe('typed evaluation helpers', () => {
  const cases: { name: string; run: () => unknown; want: unknown }[] = [
    { name: 'evalBool true', run: () => evalBool(program('request.method == "GET"'), activation), want: true },
    { name: 'evalBool false', run: () => evalBool(program('request.method == "POST"'), activation), want: false },
    { name: 'evalBool failure', run: () => evalBool(program(FAILING), activation), want: 'error' },
    { name: 'evalBool non-bool result', run: () => evalBool(program('jwt.sub'), activation), want: 'error' },
    { name: 'evalString string', run: () => evalString(program('jwt.sub'), activation), want: { ok: true, value: 'u1' } },
    { name: 'evalString int', run: () => evalString(program('size(jwt)'), activation), want: { ok: true, value: '2' } },
    { name: 'evalString bytes', run: () => evalString(program('b"hi"'), activation), want: { ok: true, value: 'hi' } },
    { name: 'evalString list fails', run: () => evalString(program('[1]'), activation).ok, want: false },
    { name: 'evalValue map to JSON data', run: () => evalValue(program('{"a": 1, "b": [true]}'), activation), want: { ok: true, value: { a: 1, b: [true] } } },
    { name: 'evalValue large int as string', run: () => evalValue(program('9007199254740991 * 1024'), activation), want: { ok: true, value: String(9007199254740991n * 1024n) } },
    { name: 'evalValue type value fails', run: () => evalValue(program('type(1)'), activation).ok, want: false },
    { name: 'evalNumber int', run: () => evalNumber(program('3'), activation), want: { ok: true, value: 3 } },
    { name: 'evalNumber double', run: () => evalNumber(program('0.25'), activation), want: { ok: true, value: 0.25 } },
    { name: 'evalNumber uint', run: () => evalNumber(program('3u'), activation), want: { ok: true, value: 3 } },
    { name: 'evalNumber string fails', run: () => evalNumber(program('"3"'), activation).ok, want: false },
    { name: 'evalBody string as is', run: () => evalBody(program('"plain"'), activation), want: { ok: true, value: 'plain' } },
    { name: 'evalBody map as JSON', run: () => evalBody(program('{"sub": jwt.sub}'), activation), want: { ok: true, value: '{"sub":"u1"}' } },
  ];
  for (const c of cases) it(c.name, () => assert.deepEqual(c.run(), c.want));
});

describe('failure semantics (SPEC.md)', () => {
  it('a failing log/trace attribute drops the pair', () => {
    assert.equal(attributeValue(program(FAILING), activation), undefined);
    assert.equal(attributeValue(program('jwt.sub'), activation), 'u1');
  });

  it('a failing metric label yields unknown', () => {
    assert.equal(metricLabel(program(FAILING), activation), UNKNOWN_LABEL);
    assert.equal(metricLabel(program('[1, 2]'), activation), UNKNOWN_LABEL);
    assert.equal(metricLabel(program('request.method'), activation), 'GET');
  });

  it('a failing filter does not pass', () => {
    assert.equal(conditionHolds(program(FAILING), activation), false);
    assert.equal(conditionHolds(program('true'), activation), true);
  });

  const rule = (action: AuthorizationAction, ...exprs: string[]): AuthorizationRule => ({ action, matchExpressions: exprs.map(program) });
  const cases: { name: string; rules: AuthorizationRule[]; allowed: boolean; reason?: string }[] = [
    { name: 'no rules allow', rules: [], allowed: true },
    { name: 'matching Allow allows', rules: [rule('Allow', 'request.method == "GET"')], allowed: true },
    { name: 'Allow rules exist, none matches: deny', rules: [rule('Allow', 'request.method == "POST"')], allowed: false, reason: 'no_allow_matched' },
    { name: 'a failing Allow does not allow', rules: [rule('Allow', FAILING)], allowed: false, reason: 'no_allow_matched' },
    { name: 'any matching Allow is enough', rules: [rule('Allow', FAILING), rule('Allow', 'true')], allowed: true },
    { name: 'all matchExpressions must hold', rules: [rule('Allow', 'true', 'false')], allowed: false, reason: 'no_allow_matched' },
    { name: 'matching Deny denies', rules: [rule('Allow', 'true'), rule('Deny', 'request.path == "/admin"')], allowed: false, reason: 'denied' },
    { name: 'a failing Deny does not deny', rules: [rule('Deny', FAILING)], allowed: true },
    { name: 'a Deny with one false expression does not deny', rules: [rule('Deny', 'true', 'false')], allowed: true },
    { name: 'Require met', rules: [rule('Require', 'has(jwt.sub)')], allowed: true },
    { name: 'Require not met denies', rules: [rule('Require', 'request.headers["x-role"] == "viewer"')], allowed: false, reason: 'require_not_met' },
    { name: 'a failing Require denies', rules: [rule('Require', FAILING)], allowed: false, reason: 'require_not_met' },
    { name: 'Require and Allow both needed', rules: [rule('Require', 'true'), rule('Allow', 'false')], allowed: false, reason: 'no_allow_matched' },
  ];
  for (const c of cases) {
    it(`authorize: ${c.name}`, () => {
      const decision = authorize(c.rules, activation);
      assert.equal(decision.allowed, c.allowed);
      if (!decision.allowed) assert.equal(decision.reason, c.reason);
    });
  }
});
