import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { TYPEBOX_BUNDLE, typeboxBundle } from '../../scripts/gen-typebox.ts';
import { modulesLoadedBy } from '../../test/support/loaded-modules.ts';
import { Compile, Format, Type } from './typebox.ts';

const SRC = fileURLToPath(new URL('..', import.meta.url));
const TRANSLATOR = fileURLToPath(new URL('../controller/translate/incremental.ts', import.meta.url));

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sources(path);
    return entry.name.endsWith('.ts') && !entry.name.endsWith('.test.ts') ? [path] : [];
  });
}

describe('TypeBox from one generated file (src/api/typebox.ts)', () => {
  it('src/api/vendor/typebox.cjs is the installed TypeBox (npm run gen:typebox)', () => {
    assert.equal(readFileSync(TYPEBOX_BUNDLE, 'utf8'), typeboxBundle());
  });

  it('the translator loads none of the package\'s ES modules', () => {
    const urls = modulesLoadedBy(TRANSLATOR);
    assert.ok(urls.some((url) => url.endsWith('/api/typebox.ts')), 'the translator was loaded, through typebox.ts');
    assert.deepEqual(urls.filter((url) => url.includes('/node_modules/typebox/')), []);
  });

  it('no other module of src/ imports a TypeBox value from the package (one copy of its formats and settings)', () => {
    const valueImport = /^import\s+(?!type\b)[^;]*from\s+'typebox(\/[a-z]+)?';/m;
    const offenders = sources(SRC).filter((file) => valueImport.test(readFileSync(file, 'utf8'))).map((file) => relative(SRC, file));
    assert.deepEqual(offenders, []);
  });

  it('a format registered here is the one the validators compiled here check', () => {
    Format.Set('typebox-test-even-length', (value: string) => value.length % 2 === 0);
    const validator = Compile(Type.String({ format: 'typebox-test-even-length' }));
    assert.equal(validator.Check('ab'), true);
    assert.equal(validator.Check('abc'), false);
  });
});
