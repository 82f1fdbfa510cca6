/** The Helm functions render.go reimplements behave as Helm's do (fixture-chart/). */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { coalesce, GO_SKIP, renderChart } from './render.ts';

const FIXTURE = join(import.meta.dirname, 'fixture-chart');

describe('render.go: Helm functions over text/template + sprig', { skip: GO_SKIP }, () => {
  it('include, tpl, toYaml, fromYaml, .Files.Get, .Chart, .Release, missing keys', () => {
    const [object] = renderChart({}, { name: 'rel', namespace: 'ns' }, FIXTURE).objects;
    assert.deepEqual(object, {
      include: 'REL@NS',
      tpl: 'hello from rel',
      toYaml: { a: true, b: [1, 'x'] },
      fromYaml: 'v',
      files: 'file content',
      missingFile: '',
      missingKey: '',
      chart: 'fixture-1.2.3-4.5.6',
      service: 'Helm',
      env: true,
    });
  });

  it('drops sprig env and expandenv, as Helm does', () => {
    assert.throws(() => renderChart({ template: '{{ env "HOME" }}' }, { name: 'rel', namespace: 'ns' }, FIXTURE), /function "env" not defined/);
  });
});

describe('coalesce (Helm values merge)', () => {
  const CASES = [
    { name: 'maps merge key by key', defaults: { a: { x: 1, y: 2 } }, overrides: { a: { y: 3 } }, want: { a: { x: 1, y: 3 } } },
    { name: 'lists replace', defaults: { a: [1, 2] }, overrides: { a: [3] }, want: { a: [3] } },
    { name: 'null deletes', defaults: { a: { x: 1, y: 2 } }, overrides: { a: { x: null } }, want: { a: { y: 2 } } },
    { name: 'a scalar replaces a map', defaults: { a: { x: 1 } }, overrides: { a: 'flat' }, want: { a: 'flat' } },
  ];
  for (const c of CASES) it(c.name, () => assert.deepEqual(coalesce(c.defaults, c.overrides), c.want));
});
