/**
 * The production build (npm run build): the CLI and each of its worker entries bundled by esbuild
 * into dist/, which a deployment runs (`node dist/switchboard.mjs …`, the Dockerfile). The sources
 * stay runnable as they are (bin/switchboard.js, npm start, npm test).
 *
 * Why (issue 15, time to ready and RSS): from the sources every thread loads its graph of ~1,000
 * ES modules one by one, and Node's loader costs per module (resolve, realpath, link, a compile
 * each) whatever its size; one bundle of the same code loads in a fraction of that CPU and memory
 * (bench/RESULTS.md).
 *
 * How it stays what the sources are:
 * - Code splitting: every `import()` the sources make (run.ts → run-gateway.ts after the config
 *   thread started, main.ts → one command) stays a separate chunk, loaded when the sources load it.
 *   The entries share chunks, so each thread loads only what its own graph reaches.
 * - Synchronous lazy loads (`lazyModule(import.meta.url, './x.ts')`, parse.ts's
 *   `createRequire(import.meta.url)('./yaml-parse.ts')`, typebox.ts's vendor bundle) name a file
 *   next to their source, which is not there in dist/. lazyRequiresPlugin() rewrites each into a plain
 *   `require('./x.ts')`, which esbuild bundles as a module evaluated on the first call (its
 *   `__esm` wrapper): the code is in the chunk, but neither it nor what only it imports runs before
 *   that call, as from the sources.
 * - Packages loaded with a stored `createRequire` (gpt-tokenizer in tokencount.ts, the OTLP
 *   exporters in otlp-exporters.ts) are not seen by esbuild and stay in node_modules, resolved from
 *   dist/ at the first call: a deployment keeps its production node_modules (the Dockerfile does).
 * - Worker entries: src/common/entry-points.ts names `dist/<worker>.mjs` when SWITCHBOARD_BUNDLED
 *   is defined (here), the .ts source otherwise; WORKERS below must list every such worker.
 *
 * `--outdir <dir>` writes elsewhere (test/e2e/dist.test.ts builds into a temporary folder).
 */
import { mkdirSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { join, relative } from 'node:path';
import { parseArgs } from 'node:util';
import { build, type Metafile, type Plugin } from 'esbuild';

const root = join(import.meta.dirname, '..');

/** Every module a worker thread or cluster process runs; the bundle is dist/<key>.mjs (entry-points.ts derives the key from the file name). */
export const WORKERS: Readonly<Record<string, string>> = {
  'config-thread-worker': 'src/embedded/config-thread-worker.ts',
  'translator-thread-worker': 'src/embedded/translator-thread-worker.ts',
  'parser-thread-worker': 'src/controller/sources/file/parser-thread-worker.ts',
  'proxy-worker': 'src/distribute/cluster/proxy-worker.ts',
};
for (const [name, source] of Object.entries(WORKERS)) {
  if (!source.endsWith(`/${name}.ts`)) throw new Error(`WORKERS: ${name} must be the file name of ${source} (entry-points.ts derives it from there)`);
}

/** The CLI's entry: the same file `npx switchboard` runs from the sources (relaunch, compile cache, then main.ts). */
const CLI = 'bin/switchboard.js';

/**
 * Each chunk is an ES module; bundled CommonJS code (and esbuild's `require` of a package left in
 * node_modules) needs a `require`, which an ES module does not have. Names no source uses, so
 * nothing bundled collides with them.
 */
const BANNER = "import { createRequire as __switchboardCreateRequire } from 'node:module'; const require = __switchboardCreateRequire(import.meta.url);";

const RELATIVE_CREATE_REQUIRE = /createRequire\(import\.meta\.url\)\(('\.\.?\/[^']+')\)/g;
const LAZY_MODULE = /lazyModule<([^>]+)>\(import\.meta\.url, ('\.\.?\/[^']+')\)/g;

/** A relative load by a spelling the rewrite does not know: it would fail in dist/ (nothing is beside the chunk), so the build stops. */
const UNREWRITTEN = /lazyModule(<[^>]*>)?\(\s*import\.meta\.url|createRequire\(\s*import\.meta\.url\s*\)\(\s*["'`]\./;

/** The rewrite of one source's synchronous lazy loads (see the header); undefined when it has none. */
export function rewriteLazyRequires(source: string, file = 'source'): string | undefined {
  if (!source.includes('import.meta.url')) return undefined;
  const rewritten = source
    .replace(RELATIVE_CREATE_REQUIRE, 'require($1)')
    // lazyModule's memo, with the load esbuild can see: the module runs on the first call.
    .replace(LAZY_MODULE, '((): (() => $1) => { let loaded: $1 | undefined; return () => (loaded ??= require($2) as $1); })()');
  const left = UNREWRITTEN.exec(rewritten);
  if (left) throw new Error(`${file}: "${left[0]}…" loads a module relative to its source file in a form scripts/build.ts does not rewrite (write it as lazyModule<T>(import.meta.url, './x.ts') or createRequire(import.meta.url)('./x.ts') on one line)`);
  return rewritten === source ? undefined : rewritten;
}

/** `workerEntry(new URL('./x-worker.ts', import.meta.url))`: the worker a source starts. */
const WORKER_SITE = /workerEntry\(new URL\('(?:[^']*\/)?([^'/]+)\.ts', import\.meta\.url\)\)/g;

/** A URL of a .ts file relative to the module: in dist/ there is none beside the chunk. */
const SOURCE_FILE_URL = /new URL\(\s*['"`][^'"`]+\.ts['"`]\s*,\s*import\.meta\.url\s*\)/;

/**
 * One pass over src/ (test files left out): the sources with a lazy load to rewrite, and the checks
 * of checkAndRewrite() (what they catch would otherwise fail only when that code runs).
 */
function scanSources(): Map<string, string> {
  const rewritten = new Map<string, string>();
  for (const file of readdirSync(join(root, 'src'), { recursive: true, encoding: 'utf8' })) {
    if (!file.endsWith('.ts') || file.endsWith('.test.ts')) continue;
    const path = join(root, 'src', file);
    const contents = checkAndRewrite(readFileSync(path, 'utf8'), path);
    if (contents !== undefined) rewritten.set(path, contents);
  }
  return rewritten;
}

/** What the build makes of one source: its lazy loads rewritten (undefined: nothing to rewrite); throws on a path the bundle could not follow. */
export function checkAndRewrite(source: string, file: string): string | undefined {
  for (const [, worker] of source.matchAll(WORKER_SITE)) {
    if (!Object.hasOwn(WORKERS, worker!)) throw new Error(`${file} starts the worker ${worker}.ts, which scripts/build.ts's WORKERS does not list: dist/${worker}.mjs would not exist`);
  }
  const sourceFileUrl = SOURCE_FILE_URL.exec(source.replaceAll(WORKER_SITE, ''));
  if (sourceFileUrl) throw new Error(`${file}: ${sourceFileUrl[0]} names a source file, which dist/ does not have (a worker goes through workerEntry(), src/common/entry-points.ts)`);
  return rewriteLazyRequires(source, file);
}

/**
 * Serves the rewritten sources. The files are found first and named in the filter, which esbuild
 * matches itself: a callback into JavaScript for each of the ~1,000 modules would add ~1 s to the build.
 */
function lazyRequiresPlugin(): Plugin {
  const rewritten = scanSources();
  const escape = (path: string): string => path.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  return {
    name: 'switchboard-lazy-requires',
    setup(esbuild) {
      if (rewritten.size === 0) return;
      esbuild.onLoad({ filter: new RegExp(`^(${[...rewritten.keys()].map(escape).join('|')})$`) }, (args) => {
        const contents = rewritten.get(args.path);
        return contents === undefined ? undefined : { contents, loader: 'ts' };
      });
    },
  };
}

export interface BuildResult {
  readonly outdir: string;
  /** Bytes written per output file (relative to outdir), source maps excluded. */
  readonly sizes: Readonly<Record<string, number>>;
  /** esbuild's account of every input and how it is imported (test/e2e/dist.test.ts checks what loads eagerly). */
  readonly metafile: Metafile;
}

/** Builds dist/ (or `outdir`) from scratch. */
export async function buildDist(outdir = join(root, 'dist')): Promise<BuildResult> {
  rmSync(outdir, { recursive: true, force: true });
  mkdirSync(outdir, { recursive: true });
  const result = await build({
    absWorkingDir: root,
    entryPoints: [{ in: CLI, out: 'switchboard' }, ...Object.entries(WORKERS).map(([out, source]) => ({ in: source, out }))],
    outdir,
    bundle: true,
    splitting: true,
    format: 'esm',
    platform: 'node',
    target: 'node22',
    outExtension: { '.js': '.mjs' },
    // One flat folder: entry-points.ts finds a worker entry beside whichever chunk holds it.
    entryNames: '[name]',
    chunkNames: 'chunk-[hash]',
    sourcemap: 'linked',
    // Licence comments go to a .LEGAL.txt beside the chunk they come from.
    legalComments: 'linked',
    // Whitespace and syntax only, names kept (stack traces, error names and class names read as in
    // the sources): each thread holds the source text of what it loads, ~2 MiB less of it (the
    // serving side's import: +45 → +41 MiB RSS).
    minifyWhitespace: true,
    minifySyntax: true,
    define: { SWITCHBOARD_BUNDLED: 'true' },
    banner: { js: BANNER },
    plugins: [lazyRequiresPlugin()],
    metafile: true,
    logLevel: 'warning',
  });
  if (result.errors.length > 0) throw new Error(`esbuild: ${result.errors.map((e) => e.text).join('; ')}`);
  const sizes: Record<string, number> = {};
  for (const [file, output] of Object.entries(result.metafile.outputs)) {
    if (!file.endsWith('.map')) sizes[relative(outdir, join(root, file))] = output.bytes;
  }
  return { outdir, sizes, metafile: result.metafile };
}

if (import.meta.main) {
  const { values } = parseArgs({ options: { outdir: { type: 'string' } } });
  const started = performance.now();
  const { outdir, sizes } = await buildDist(values.outdir);
  const total = Object.values(sizes).reduce((sum, bytes) => sum + bytes, 0);
  process.stdout.write(`built ${outdir}: ${Object.keys(sizes).length} files, ${(total / 1024 / 1024).toFixed(1)} MiB, ${Math.round(performance.now() - started)} ms\n`);
}
