/**
 * The CRD's CEL rules and the TypeScript checks are the same rules written twice; this evaluates
 * the CEL of every rule site in every case with cel-js and fails the day the two disagree. It also
 * fails when a rule has no case that breaks it.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { evaluate } from '@marcbachmann/cel-js';
import { CRD_KINDS, KIND_SCHEMAS, isProxyKind } from '../../src/api/v1alpha1/kinds.ts';
import type { ProxyKind } from '../../src/api/v1alpha1/kinds.ts';
import { applyDefaults } from '../../src/api/v1alpha1/validate.ts';
import { RULES_KEYWORD } from '../../src/api/v1alpha1/schema/rules.ts';
import type { CrossFieldRule } from '../../src/api/v1alpha1/schema/rules.ts';
import { ruleSites } from '../../src/api/v1alpha1/schema/walk.ts';
import { loadCases } from './cases.ts';

const cases = loadCases();

function kindOf(obj: unknown): ProxyKind | undefined {
  const { apiVersion, kind } = (obj ?? {}) as { apiVersion?: unknown; kind?: unknown };
  return typeof apiVersion === 'string' && typeof kind === 'string' && isProxyKind(apiVersion, kind) ? (kind as ProxyKind) : undefined;
}

function allRuleMessages(): Set<string> {
  const out = new Set<string>();
  const walk = (s: unknown): void => {
    if (!s || typeof s !== 'object') return;
    for (const r of ((s as Record<string, unknown>)[RULES_KEYWORD] as CrossFieldRule<unknown>[] | undefined) ?? []) out.add(r.message);
    for (const [k, v] of Object.entries(s)) if (k !== RULES_KEYWORD) (Array.isArray(v) ? v : [v]).forEach(walk);
  };
  for (const k of CRD_KINDS) { walk(k.spec); walk(k.status); }
  return out;
}

const broken = new Set<string>();

describe('CEL rules agree with the TypeScript checks', () => {
  for (const c of cases) {
    const kind = kindOf(c.object);
    if (!kind) continue;
    it(c.name, () => {
      for (const object of [c.object, applyDefaults(c.object)]) {
        for (const { rule, self, path } of ruleSites(KIND_SCHEMAS[kind], object)) {
          let expected: boolean;
          try {
            expected = rule.check(self);
          } catch {
            continue; // the node is malformed; the schema reports it and Kubernetes would not run the rule
          }
          const actual = evaluate(rule.cel, { self });
          assert.equal(actual, expected, `${path || '.'}: rule "${rule.message}"\n  CEL ${rule.cel}\n  gave ${String(actual)}, TypeScript gave ${expected}`);
          if (!expected) broken.add(rule.message);
        }
      }
    });
  }
  it('every rule is broken by at least one case', () => {
    const missing = [...allRuleMessages()].filter((m) => !broken.has(m));
    assert.deepEqual(missing, [], 'rules without an invalid case');
  });
});
