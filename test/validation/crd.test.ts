/** The generated CRDs: committed files are fresh, schemas are structural, CEL rules parse. */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from '@marcbachmann/cel-js';
import { crdFiles } from '../../src/api/crd/render.ts';
import { buildCrds } from '../../src/api/crd/crd.ts';
import { renderCrds } from '../../src/cli/crds.ts';

type Schema = Record<string, unknown>;

/** Kubernetes' structural schema rules, as far as our generator can break them. Returns the violations. */
function structuralViolations(schema: Schema, path: string, out: string[] = []): string[] {
  const intOrString = schema['x-kubernetes-int-or-string'] === true;
  const preserve = schema['x-kubernetes-preserve-unknown-fields'] === true;
  if (!schema.type && !intOrString && !preserve) out.push(`${path}: no type`);
  if (schema.properties && schema.additionalProperties) out.push(`${path}: properties together with additionalProperties`);
  if (typeof schema.additionalProperties === 'boolean') out.push(`${path}: boolean additionalProperties`);
  for (const key of Object.keys(schema)) {
    if (key.startsWith('~') || key.startsWith('x-switchboard') || ['patternProperties', '$ref', 'const', 'oneOf', 'allOf', 'not', '$id'].includes(key)) out.push(`${path}: keyword ${key}`);
  }
  if (schema.anyOf) {
    const types = (schema.anyOf as Schema[]).map((b) => JSON.stringify(b));
    if (!intOrString || types.join() !== '{"type":"integer"},{"type":"string"}') out.push(`${path}: anyOf outside int-or-string`);
  }
  if (schema.type === 'array' && !schema.items) out.push(`${path}: array without items`);
  for (const v of (schema['x-kubernetes-validations'] as { rule: string; message: string }[] | undefined) ?? []) {
    if (!v.message) out.push(`${path}: validation without message`);
    try { parse(v.rule); } catch (e) { out.push(`${path}: CEL rule does not parse: ${(e as Error).message}`); }
  }
  for (const [k, v] of Object.entries((schema.properties as Record<string, Schema>) ?? {})) structuralViolations(v, `${path}.${k}`, out);
  if (schema.items) structuralViolations(schema.items as Schema, `${path}[]`, out);
  if (schema.additionalProperties && typeof schema.additionalProperties === 'object') structuralViolations(schema.additionalProperties as Schema, `${path}{}`, out);
  return out;
}

describe('generated CRDs', () => {
  it('chart/crds matches a fresh generation (run npm run gen:crds)', () => {
    for (const f of crdFiles()) {
      const committed = readFileSync(join(import.meta.dirname, '..', '..', 'chart', 'crds', f.name), 'utf8');
      assert.ok(committed === f.content, `chart/crds/${f.name} is stale: run npm run gen:crds`);
    }
  });

  for (const crd of buildCrds()) {
    it(`${crd.metadata.name} is structural, with status subresource and printer columns`, () => {
      const version = (crd.spec.versions as Schema[])[0];
      const schema = (version.schema as { openAPIV3Schema: Schema }).openAPIV3Schema;
      assert.deepEqual(structuralViolations(schema, crd.spec.names ? (crd.spec.names as Schema).kind as string : ''), []);
      assert.deepEqual(version.subresources, { status: {} });
      assert.deepEqual((version.additionalPrinterColumns as Schema[]).map((c) => c.name).filter((n) => n !== 'Type'), ['Accepted', 'Age']);
    });
  }

  it('renderCrds() is one multi-document YAML stream of every CRD', () => {
    // Parsing 1 MB of YAML is slow on this machine; the stream is the per-file YAML joined by separators.
    const stream = renderCrds();
    const names = [...stream.matchAll(/^ {2}name: (\S+\.switchboard\.dev)$/gm)].map((m) => m[1]);
    assert.deepEqual(names.sort(), buildCrds().map((c) => c.metadata.name).sort());
    assert.equal(stream.split(/^---$/m).length, buildCrds().length);
  });

  it('the structural walker catches a non-structural schema', () => {
    assert.deepEqual(structuralViolations({ type: 'object', properties: { a: {}, b: { anyOf: [{ type: 'string' }] } } }, 'x'), ['x.a: no type', 'x.b: no type', 'x.b: anyOf outside int-or-string']);
  });
});
