import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { stringify } from 'yaml';
import { DEFAULT_CONFIG_LIMITS } from './limits.ts';
import { parseYamlFile } from './parse.ts';
import { parseWithYaml } from './yaml-parse.ts';
import { parsePlainYaml, PLAIN_YAML_MAX_BYTES } from './plain-yaml.ts';

const REPO = path.resolve(import.meta.dirname, '../../../..');
const route = (name: string): string => `apiVersion: gateway.networking.k8s.io/v1\nkind: HTTPRoute\nmetadata:\n  name: ${name}\nspec: {}\n`;

function yamlFilesUnder(dir: string): string[] {
  const out: string[] = [];
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    if (entry.name === 'node_modules' || entry.name.startsWith('.')) continue;
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) out.push(...yamlFilesUnder(full));
    else if (/\.ya?ml$/.test(entry.name)) out.push(full);
  }
  return out;
}

describe('parsePlainYaml (the fast path of parseYamlFile)', () => {
  it('reads every YAML file of the repository as yaml does, and takes most of them', () => {
    const files = [...yamlFilesUnder(path.join(REPO, 'test')), ...yamlFilesUnder(path.join(REPO, 'examples')), ...yamlFilesUnder(path.join(REPO, 'src'))];
    let fast = 0;
    for (const file of files) {
      const text = fs.readFileSync(file, 'utf8');
      if (parsePlainYaml(text, DEFAULT_CONFIG_LIMITS)) fast++;
      assert.deepEqual(parseYamlFile(text, file), parseWithYaml(text, file, DEFAULT_CONFIG_LIMITS), file);
    }
    assert.ok(files.length > 50, `${files.length} files`);
    assert.ok(fast > files.length / 2, `only ${fast} of ${files.length} files took the fast path`);
  });

  it('reads generated documents as yaml does (property)', () => {
    const scalar = fc.oneof(fc.string(), fc.integer(), fc.double({ noNaN: true }), fc.boolean(), fc.constant(null),
      fc.constantFrom('yes', 'no', 'on', '0o17', '0x1F', '0b11', '1_000', '2024-01-01', '.inf', '~', 'null', '1e3', '+1', '-.5', '012', 'a: b', '- x', '#c', '"q"', "'s'"));
    const value = fc.letrec((tie) => ({
      node: fc.oneof({ depthSize: 'small' }, scalar, fc.array(tie('node'), { maxLength: 4 }), fc.dictionary(fc.string({ minLength: 1, maxLength: 8 }), tie('node'), { maxKeys: 4 })),
    })).node;
    const documents = fc.array(fc.dictionary(fc.string({ minLength: 1, maxLength: 8 }), value, { maxKeys: 5 }), { minLength: 1, maxLength: 4 });
    fc.assert(fc.property(documents, fc.constantFrom('block', 'flow'), (docs, style) => {
      const text = docs.map((d) => stringify(d, style === 'flow' ? { collectionStyle: 'flow' } : {})).join('---\n');
      assert.deepEqual(parseYamlFile(text, 'gen.yaml'), parseWithYaml(text, 'gen.yaml', DEFAULT_CONFIG_LIMITS));
    }), { numRuns: 300 });
  });

  it('keeps document index and content line', () => {
    const docs = parsePlainYaml(`# leading\n${route('a')}---\n${route('b')}`, DEFAULT_CONFIG_LIMITS);
    assert.deepEqual(docs?.map((d) => [d.index, d.line]), [[0, 2], [1, 8]]);
  });

  const slowRows: { name: string; text: string; limits?: Partial<typeof DEFAULT_CONFIG_LIMITS> }[] = [
    { name: 'an anchor and alias', text: `${route('a')}  x: &a 1\n  y: *a\n` },
    { name: 'a flow alias', text: `a: [&x 1, *x]\n` },
    { name: 'a tag', text: `a: !custom 1\n` },
    { name: 'a core tag', text: `a: !!str 1\n` },
    { name: 'a merge key', text: `a: {x: 1}\nb:\n  <<: {y: 2}\n` },
    { name: 'a directive', text: `%YAML 1.2\n---\na: 1\n` },
    { name: 'a __proto__ key', text: `__proto__: {polluted: true}\n` },
    { name: 'an empty document between two others', text: `a: 1\n---\n---\nb: 2\n` },
    { name: 'a duplicate key', text: `a: 1\na: 2\n` },
    { name: 'a syntax error', text: `a: [1, 2\n` },
    { name: 'too many documents', text: 'a: 1\n---\n'.repeat(5), limits: { maxDocuments: 3 } },
    { name: 'too many nodes', text: `a: [${Array(50).fill('1').join(', ')}]\n`, limits: { maxNodes: 20 } },
    { name: 'nested near the depth bound', text: `a: ${'['.repeat(99)}${']'.repeat(99)}\n` },
    { name: 'a file over the fast path size', text: `a: "${'x'.repeat(PLAIN_YAML_MAX_BYTES)}"\n` },
  ];
  for (const row of slowRows) {
    it(`leaves ${row.name} to yaml`, () => {
      assert.equal(parsePlainYaml(row.text, { ...DEFAULT_CONFIG_LIMITS, ...row.limits }), undefined);
    });
  }
});
