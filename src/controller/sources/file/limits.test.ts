import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, describe, it } from 'node:test';
import { DEFAULT_CONFIG_LIMITS, type ConfigLimits } from './limits.ts';
import { FileSet } from './file-set.ts';
import { parseYamlFile } from './parse.ts';
import { readConfigFile } from './read.ts';

const configMap = (name: string): string => `apiVersion: v1\nkind: ConfigMap\nmetadata: {name: ${name}}\ndata:\n  k: v\n`;
const limits = (overrides: Partial<ConfigLimits>): ConfigLimits => ({ ...DEFAULT_CONFIG_LIMITS, ...overrides });

/** Each row: a file over one bound is refused whole, with the file (and document/line) named, in bounded time. */
const rows: { name: string; text: () => string; limits?: Partial<ConfigLimits>; message: RegExp; document?: number; line?: number }[] = [
  {
    name: 'alias bomb (50,000 aliases of one anchor)',
    text: () => `${configMap('bomb')}  base: &a x\n  list:\n${'    - *a\n'.repeat(50_000)}`,
    message: /over a configuration limit: more than 1000 aliases in the file/, document: 0, line: 1008,
  },
  {
    name: 'billion laughs (few aliases, exponential expansion)',
    text: () => `apiVersion: v1\nkind: ConfigMap\nmetadata: {name: lol}\ndata:\n  l0: &l0 [a, a, a, a, a, a, a, a, a]\n${Array.from({ length: 8 }, (_, i) => `  l${i + 1}: &l${i + 1} [${Array(9).fill(`*l${i}`).join(', ')}]\n`).join('')}`,
    message: /over a configuration limit: Excessive alias count .* at most 100 times/, document: 0, line: 1,
  },
  {
    name: 'too many documents',
    text: () => configMap('a').concat('---\n'.repeat(20)),
    limits: { maxDocuments: 10 },
    message: /more than 10 YAML documents in the file/,
  },
  {
    name: 'deep nesting',
    text: () => `${configMap('deep')}  nested: ${'['.repeat(150)}${']'.repeat(150)}\n`,
    message: /nested deeper than 100 levels/, document: 0, line: 6,
  },
  {
    name: 'too many nodes',
    text: () => `${configMap('big')}  list: [${Array(2_000).fill('1').join(', ')}]\n`,
    limits: { maxNodes: 1_000 },
    message: /more than 1000 YAML nodes in the file/, document: 0,
  },
  {
    name: 'a 50,000-key mapping with a duplicate key (linear check, not yaml\'s pairwise one)',
    text: () => `${configMap('keys')}${Array.from({ length: 50_000 }, (_, i) => `  k${i}: v\n`).join('')}  k7: again\n`,
    message: /YAML syntax error: Map keys must be unique: "k7" appears twice/, document: 0, line: 50_006,
  },
];

describe('configuration limits', () => {
  for (const row of rows) {
    it(`refuses ${row.name}`, () => {
      const started = performance.now();
      const parsed = parseYamlFile(row.text(), 'hostile.yaml', limits(row.limits ?? {}));
      const elapsedMs = performance.now() - started;
      assert.equal(parsed.syntaxOk, false, 'the file is refused whole (its last good objects keep serving)');
      assert.deepEqual(parsed.objects, []);
      assert.equal(parsed.problems.length, 1, JSON.stringify(parsed.problems));
      const [problem] = parsed.problems;
      assert.equal(problem.severity, 'error');
      assert.equal(problem.file, 'hostile.yaml');
      assert.match(problem.message, row.message);
      if (row.document !== undefined) assert.equal(problem.document, row.document);
      if (row.line !== undefined) assert.equal(problem.line, row.line);
      assert.ok(elapsedMs < 5_000, `took ${elapsedMs.toFixed(0)} ms`);
    });
  }

  it('reports at most 20 syntax errors of one file', () => {
    const parsed = parseYamlFile(`a: 1\n${' b: 2\n'.repeat(5_000)}`, 'many.yaml');
    assert.equal(parsed.problems.length, 21);
    assert.match(parsed.problems[20].message, /and \d+ more YAML syntax errors in this file/);
  });

  it('takes a file just under every limit', () => {
    const parsed = parseYamlFile(`${configMap('ok')}---\n${configMap('ok2')}`, 'ok.yaml', limits({ maxDocuments: 2, maxNodes: 30, maxDepth: 3 }));
    assert.equal(parsed.syntaxOk, true, JSON.stringify(parsed.problems));
  });

  describe('file size', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sb-limits-'));
    after(() => fs.rmSync(dir, { recursive: true, force: true }));

    it('refuses a file over maxFileBytes without parsing it, and names its size', () => {
      const file = path.join(dir, 'big.yaml');
      fs.writeFileSync(file, configMap('x').padEnd(5_000, '#'));
      const read = readConfigFile(file, undefined, limits({ maxFileBytes: 4_096 }));
      assert.equal(read.kind, 'read');
      assert.equal(read.kind === 'read' && read.parsed.syntaxOk, false);
      assert.match(read.kind === 'read' ? read.parsed.problems[0].message : '', /the file is 4\.9 KiB, more than the 4 KiB a file may hold/);
      // The same oversize file is not reported again on the next scan.
      assert.equal(readConfigFile(file, read.kind === 'read' ? read.hash : undefined, limits({ maxFileBytes: 4_096 })).kind, 'unchanged');
    });

    it('refuses the files past maxTotalBytes and keeps the last good objects of each', async () => {
      const folder = fs.mkdtempSync(path.join(dir, 'total-'));
      fs.writeFileSync(path.join(folder, 'a.yaml'), configMap('a'));
      fs.writeFileSync(path.join(folder, 'b.yaml'), configMap('b'));
      const set = new FileSet([folder], limits({ maxTotalBytes: 150 }));
      const first = await set.scan();
      assert.deepEqual(first.snapshot.objects.map((o) => o.object.metadata.name), ['a', 'b']);
      fs.writeFileSync(path.join(folder, 'b.yaml'), `${configMap('b')}---\n${configMap('b2')}`);
      const second = await set.scan();
      assert.deepEqual(second.snapshot.objects.map((o) => o.object.metadata.name), ['a', 'b']);
      assert.match(second.newProblems.map((p) => `${p.file} ${p.message}`).join('\n'), /b\.yaml over a configuration limit: the configuration files together hold more than 150 bytes/);
      fs.writeFileSync(path.join(folder, 'a.yaml'), '# emptied\n');
      const third = await set.scan();
      assert.deepEqual(third.snapshot.objects.map((o) => o.object.metadata.name), ['b', 'b2']);
      assert.deepEqual(third.snapshot.problems, []);
    });
  });
});
