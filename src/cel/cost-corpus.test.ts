import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, it } from 'node:test';
import { parseAllDocuments } from 'yaml';
import { compile } from './index.ts';

/**
 * The cost limits must not refuse what the project documents and tests: every CEL expression found
 * in docs/ (inline code, YAML blocks), the golden and fixture YAML, and the string literals of the
 * test suites is compiled, and none may fail for cost. Files whose point is an over-budget
 * expression are skipped.
 */

const ROOT = join(import.meta.dirname, '..', '..');
const DELIBERATELY_OVER_BUDGET = new Set(['test/golden/policy/cel-over-budget.yaml', 'test/hostile/cel.test.ts', 'test/hostile/fuzz-cel.test.ts', 'src/cel/cost.test.ts']);
/** Expressions the docs quote as examples of what is refused: they must stay refused, not accepted. */
const QUOTED_AS_REFUSED = new Set(['request.headers["a"].split(",").all(x, request.headers["b"].split(",").exists(y, x == y))']);
const LOOKS_LIKE_CEL = /\b(request|response|source|jwt|apiKey|basicAuth|llm|mcp|backend|route|gateway|extauthz|extproc)\.|\.(all|exists|exists_one|map|filter)\(/;

function files(dir: string, ext: RegExp): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const path = join(dir, e.name);
    if (e.isDirectory()) return e.name === 'node_modules' ? [] : files(path, ext);
    return ext.test(e.name) ? [path] : [];
  });
}

function yamlStrings(text: string): string[] {
  const out: string[] = [];
  const visit = (v: unknown): void => {
    if (typeof v === 'string') out.push(v);
    else if (Array.isArray(v)) v.forEach(visit);
    else if (v !== null && typeof v === 'object') Object.values(v).forEach(visit);
  };
  for (const doc of parseAllDocuments(text)) if (doc.errors.length === 0) visit(doc.toJS());
  return out;
}

function markdownStrings(text: string): string[] {
  const out: string[] = [];
  for (const block of text.matchAll(/```ya?ml\n([\s\S]*?)```/g)) out.push(...yamlStrings(block[1]));
  for (const span of text.replace(/```[\s\S]*?```/g, '').matchAll(/`([^`\n]+)`/g)) out.push(span[1]);
  return out;
}

function sourceStrings(text: string): string[] {
  const out: string[] = [];
  for (const m of text.matchAll(/'((?:[^'\\\n]|\\.)*)'|"((?:[^"\\\n]|\\.)*)"|`((?:[^`\\$]|\\.)*)`/g)) {
    const raw = m[1] ?? m[2] ?? m[3];
    try {
      out.push(JSON.parse(`"${raw.replace(/\\'/g, "'").replace(/"/g, '\\"').replace(/\\\\"/g, '\\"')}"`) as string);
    } catch {
      out.push(raw);
    }
  }
  return out;
}

function corpus(): { file: string; expression: string }[] {
  const found: { file: string; expression: string }[] = [];
  const add = (path: string, strings: string[]): void => {
    const file = relative(ROOT, path);
    if (DELIBERATELY_OVER_BUDGET.has(file)) return;
    for (const s of strings) if (LOOKS_LIKE_CEL.test(s)) found.push({ file, expression: s });
  };
  for (const path of files(join(ROOT, 'docs'), /\.md$/)) add(path, markdownStrings(readFileSync(path, 'utf8')));
  for (const path of files(join(ROOT, 'test'), /\.ya?ml$/)) add(path, yamlStrings(readFileSync(path, 'utf8')));
  for (const path of [...files(join(ROOT, 'test'), /\.test\.ts$/), ...files(join(ROOT, 'src'), /\.test\.ts$/)]) {
    add(path, sourceStrings(readFileSync(path, 'utf8')));
  }
  return found;
}

describe('expressions used in docs and tests stay under the cost budget', () => {
  it('none is refused for cost', () => {
    const expressions = corpus();
    let compiled = 0;
    const refused: string[] = [];
    for (const { file, expression } of expressions) {
      if (QUOTED_AS_REFUSED.has(expression)) continue;
      const r = compile(expression);
      if (r.ok) compiled++;
      else if (r.error.cost !== undefined) refused.push(`${file}: ${expression} — ${r.error.message}`);
    }
    assert.deepEqual(refused, []);
    // The corpus really holds expressions (a broken extractor must not pass silently).
    assert.ok(compiled > 100, `only ${compiled} of ${expressions.length} candidates compiled`);
  });

  it('what the docs quote as refused is refused', () => {
    for (const expression of QUOTED_AS_REFUSED) {
      const r = compile(expression);
      assert.ok(!r.ok && r.error.cost !== undefined, `${expression} compiled: the docs say it is refused for cost`);
    }
  });
});
