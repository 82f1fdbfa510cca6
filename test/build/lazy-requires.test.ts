import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { checkAndRewrite, rewriteLazyRequires } from '../../scripts/build.ts';

describe('rewriteLazyRequires (scripts/build.ts)', () => {
  const rows: { name: string; source: string; expected: string | undefined }[] = [
    {
      name: 'a createRequire of a file of ours becomes a require esbuild bundles',
      source: "const m = createRequire(import.meta.url)('./yaml-parse.ts') as typeof M;",
      expected: "const m = require('./yaml-parse.ts') as typeof M;",
    },
    {
      name: 'lazyModule becomes a memo around a require esbuild bundles',
      source: "const get = lazyModule<typeof P>(import.meta.url, '../x/provider.ts');",
      expected: "const get = ((): (() => typeof P) => { let loaded: typeof P | undefined; return () => (loaded ??= require('../x/provider.ts') as typeof P); })();",
    },
    {
      name: "a package through a stored createRequire stays as it is (resolved from node_modules at run time)",
      source: "const load = createRequire(import.meta.url);\nload('gpt-tokenizer');",
      expected: undefined,
    },
    { name: 'a file without import.meta.url is left alone', source: "import x from './x.ts';", expected: undefined },
  ];
  for (const row of rows) it(row.name, () => assert.equal(rewriteLazyRequires(row.source), row.expected));

  it('refuses a relative load it cannot rewrite (it would fail in dist/)', () => {
    assert.throws(() => rewriteLazyRequires('const get = lazyModule<typeof P>(\n  import.meta.url,\n  "./p.ts");'), /does not rewrite/);
    assert.throws(() => rewriteLazyRequires('createRequire(import.meta.url)("./x.ts")'), /does not rewrite/);
  });

  describe('checkAndRewrite: paths the bundle could not follow stop the build', () => {
    it('a worker started through workerEntry() and listed in WORKERS passes', () => {
      assert.equal(checkAndRewrite("new Worker(workerEntry(new URL('./config-thread-worker.ts', import.meta.url)));", 'a.ts'), undefined);
    });
    it('a worker WORKERS does not list', () => {
      assert.throws(() => checkAndRewrite("new Worker(workerEntry(new URL('./new-worker.ts', import.meta.url)));", 'a.ts'), /WORKERS does not list/);
    });
    it('a .ts URL relative to the module without workerEntry()', () => {
      assert.throws(() => checkAndRewrite("new Worker(new URL('./config-thread-worker.ts', import.meta.url));", 'a.ts'), /names a source file/);
    });
  });
});
