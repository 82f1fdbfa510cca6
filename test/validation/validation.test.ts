/** Runs the validation cases (cases/*.yaml): each valid document has no errors (also after defaulting); each invalid one exactly its expected issues. */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { applyDefaults, validateProxyObject } from '../../src/api/v1alpha1/validate.ts';
import type { ApiIssue } from '../../src/api/v1alpha1/validate.ts';
import { loadCases } from './cases.ts';
import type { Expectation } from './cases.ts';

const cases = loadCases();

const matches = (i: ApiIssue, e: Expectation) => i.path === e.path && i.severity === e.severity && i.message.includes(e.message);
const show = (issues: readonly ApiIssue[]) => issues.map((i) => `  ${i.severity} ${i.path || '.'}: ${i.message}`).join('\n') || '  (none)';

describe('validation cases', () => {
  for (const c of cases) {
    it(c.name, () => {
      const issues = validateProxyObject(c.object, { proxyModelsEnabled: c.proxyModelsEnabled });
      if (c.valid) {
        assert.deepEqual(issues.filter((i) => i.severity === 'error'), [], `valid case has errors:\n${show(issues)}`);
        const defaulted = applyDefaults(c.object);
        assert.deepEqual(validateProxyObject(defaulted, { proxyModelsEnabled: c.proxyModelsEnabled }).filter((i) => i.severity === 'error'), [], 'defaulted object no longer validates');
        assert.deepEqual(applyDefaults(defaulted), defaulted, 'defaulting is not idempotent');
        return;
      }
      for (const e of c.expect) assert.ok(issues.some((i) => matches(i, e)), `expected ${e.severity} ${e.path || '.'}: ${e.message}\ngot:\n${show(issues)}`);
      const unexpected = issues.filter((i) => !c.expect.some((e) => matches(i, e)));
      assert.deepEqual(unexpected, [], `unexpected issues:\n${show(unexpected)}`);
    });
  }
});
