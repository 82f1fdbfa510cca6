/**
 * ProxyModel golden cases (test/golden/proxy-model/*.yml): the input objects as YAML documents,
 * then a document starting with `# Output` holding the expected `{config, statuses}`, translated
 * with the ProxyModel API on (`run --enable-proxy-models`). The `.yml` extension keeps them out of
 * test/golden.test.ts, which translates with the API off. `UPDATE_GOLDEN=1` rewrites the outputs.
 */
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { parse, parseAllDocuments, stringify } from 'yaml';
import type { KubeObject } from '../../src/api/gateway/object.ts';
import { translate } from '../../src/controller/translate/index.ts';

const DIR = join(import.meta.dirname, '..', 'golden', 'proxy-model');
const OUTPUT_MARKER = /^---[ \t]*\r?\n# Output[^\n]*\n/m;
const update = process.env.UPDATE_GOLDEN === '1';

function objectsOf(input: string): KubeObject[] {
  return parseAllDocuments(input).flatMap((doc) => {
    if (doc.errors.length > 0) throw new Error(doc.errors[0].message);
    const value: unknown = doc.toJS();
    return value === null || value === undefined ? [] : [value as KubeObject];
  });
}

function golden(objects: readonly KubeObject[]): unknown {
  const { config, statuses } = translate(objects, { proxyModels: true });
  return JSON.parse(JSON.stringify({ config, statuses })) as unknown;
}

describe('ProxyModel golden translation', () => {
  const files = readdirSync(DIR).filter((f) => f.endsWith('.yml')).sort();
  it('has cases', () => assert.ok(files.length > 0));
  for (const file of files) {
    it(file, () => {
      const text = readFileSync(join(DIR, file), 'utf8');
      const marker = OUTPUT_MARKER.exec(text);
      const input = marker ? text.slice(0, marker.index) : text;
      const actual = golden(objectsOf(input));
      if (update) {
        writeFileSync(join(DIR, file), `${input.trimEnd()}\n---\n# Output\n${stringify(actual, { lineWidth: 0 })}`);
        return;
      }
      // Pure and order-independent: the objects reversed translate the same.
      assert.deepEqual(golden(objectsOf(input).reverse()), actual);
      assert.ok(marker, `${file} has no "# Output" document; run with UPDATE_GOLDEN=1 to create it`);
      assert.deepEqual(actual, parse(text.slice(marker.index + marker[0].length)));
    });
  }
});
