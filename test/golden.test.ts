/**
 * Golden translation tests: each test/golden/<area>/<case>.yaml holds the input objects as YAML
 * documents, then a document starting with `# Output` holding the expected `{config, statuses}`.
 * `UPDATE_GOLDEN=1` rewrites the Output documents from the current translator.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { parse, parseAllDocuments, stringify } from 'yaml';
import type { KubeObject } from '../src/api/gateway/object.ts';
import { translate } from '../src/controller/translate/index.ts';

const ROOT = join(import.meta.dirname, 'golden');
const OUTPUT_MARKER = /^---[ \t]*\r?\n# Output[^\n]*\n/m;
const update = process.env.UPDATE_GOLDEN === '1';

function caseFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true })
    .flatMap((entry) => (entry.isDirectory() ? caseFiles(join(dir, entry.name)) : entry.name.endsWith('.yaml') ? [join(dir, entry.name)] : []))
    .sort();
}

function splitCase(text: string): { input: string; output: string | undefined } {
  const marker = OUTPUT_MARKER.exec(text);
  if (!marker) return { input: text, output: undefined };
  return { input: text.slice(0, marker.index), output: text.slice(marker.index + marker[0].length) };
}

function inputObjects(input: string, file: string): KubeObject[] {
  return parseAllDocuments(input).flatMap((doc) => {
    if (doc.errors.length > 0) throw new Error(`${file}: ${doc.errors[0].message}`);
    const value: unknown = doc.toJS();
    return value === null || value === undefined ? [] : [value as KubeObject];
  });
}

/** What the golden files record: the config and statuses (secretPaths has its own table test, src/controller/translate/secret-provenance.test.ts). */
function goldenPart({ config, statuses }: ReturnType<typeof translate>): unknown {
  return { config, statuses };
}

describe('golden translation', () => {
  const files = caseFiles(ROOT);
  it('has cases', () => assert.ok(files.length > 0));
  for (const file of files) {
    it(relative(ROOT, file), () => {
      const { input, output } = splitCase(readFileSync(file, 'utf8'));
      const actual = JSON.parse(JSON.stringify(goldenPart(translate(inputObjects(input, file))))) as unknown;
      if (update) {
        writeFileSync(file, `${input.trimEnd()}\n---\n# Output\n${stringify(actual, { lineWidth: 0 })}`);
        return;
      }
      // Pure and order-independent: the same objects in reverse order translate identically.
      assert.deepEqual(JSON.parse(JSON.stringify(goldenPart(translate(inputObjects(input, file).reverse())))), actual);
      assert.ok(output !== undefined, `${file} has no "# Output" document; run with UPDATE_GOLDEN=1 to create it`);
      assert.deepEqual(actual, parse(output));
    });
  }
});
