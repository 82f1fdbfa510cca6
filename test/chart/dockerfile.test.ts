/**
 * The Dockerfile against what the image needs (the image itself is not built in tests): the
 * entrypoint script is package.json's `bin`, every COPY source exists and is not excluded by
 * .dockerignore, the Node version supports type stripping of the sources, and — what
 * `npm ci --omit=dev` would break — every package the shipped sources import at run time is a
 * production dependency, with no install script to need (`--ignore-scripts`).
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync, readdirSync, statSync } from 'node:fs';
import { builtinModules } from 'node:module';
import { join, relative } from 'node:path';

const ROOT = join(import.meta.dirname, '..', '..');
const read = (path: string): string => readFileSync(join(ROOT, path), 'utf8');

/** Instructions as [keyword, arguments], continuation lines joined, comments dropped. */
function instructions(dockerfile: string): [string, string][] {
  return dockerfile.replace(/\\\r?\n/g, ' ').split(/\r?\n/).map((l) => l.trim()).filter((l) => l !== '' && !l.startsWith('#')).map((l) => {
    const space = l.indexOf(' ');
    return [l.slice(0, space).toUpperCase(), l.slice(space + 1).trim()];
  });
}

const manifest = JSON.parse(read('package.json')) as { bin: Record<string, string>; dependencies: Record<string, string>; engines?: { node?: string } };
const lock = JSON.parse(read('package-lock.json')) as { packages: Record<string, { dev?: boolean; hasInstallScript?: boolean }> };
const steps = instructions(read('Dockerfile'));
const ignore = read('.dockerignore').split(/\r?\n/).map((l) => l.trim()).filter((l) => l !== '' && !l.startsWith('#'));

/** .dockerignore as Docker reads it: patterns in order, `!` re-includes, the last match decides. */
function ignored(path: string): boolean {
  let out = false;
  for (const pattern of ignore) {
    const negate = pattern.startsWith('!');
    const glob = negate ? pattern.slice(1) : pattern;
    const re = new RegExp(`^${glob.split('**').map((part) => part.split('*').map((s) => s.replace(/[.+?^${}()|[\]\\]/g, '\\$&')).join('[^/]*')).join('.*')}$`);
    if (re.test(path)) out = !negate;
  }
  return out;
}

function* sourceFiles(dir: string): Generator<string> {
  for (const entry of readdirSync(join(ROOT, dir), { withFileTypes: true })) {
    const path = `${dir}/${entry.name}`;
    if (entry.isDirectory()) yield* sourceFiles(path);
    else if (/\.(ts|js|mjs)$/.test(entry.name) && !ignored(path)) yield path;
  }
}

/** Packages a file loads at run time: value imports, re-exports and dynamic imports (not `import type`). */
function runtimePackages(text: string): string[] {
  const specifiers: string[] = [];
  const patterns = [/^\s*import\s+(?!type\s)(?:[^'";]*?\s+from\s+)?['"]([^'"]+)['"]/gm, /^\s*export\s+(?!type\s)[^'";]*?\s+from\s+['"]([^'"]+)['"]/gm, /\bimport\(\s*['"]([^'"]+)['"]\s*\)/g];
  for (const pattern of patterns) for (const match of text.matchAll(pattern)) specifiers.push(match[1]!);
  return specifiers
    .filter((s) => !s.startsWith('.') && !s.startsWith('node:') && !builtinModules.includes(s.split('/')[0]!))
    .map((s) => (s.startsWith('@') ? s.split('/').slice(0, 2).join('/') : s.split('/')[0]!));
}

/**
 * Imported by src/ but installed only as a dependency of a direct dependency (they should become
 * direct dependencies: `npm install <name>`, which also updates the lock).
 */
const TRANSITIVE_ONLY: Readonly<Record<string, string>> = {};

/** Install scripts --ignore-scripts may skip, with why. */
const SKIPPABLE_INSTALL_SCRIPTS: Readonly<Record<string, string>> = {
  protobufjs: 'scripts/postinstall.js only prints a warning about the version scheme dependents use',
};

describe('Dockerfile', () => {
  it('its entrypoint runs the production build of package.json\'s switchboard bin, which exists', () => {
    const entrypoint = JSON.parse(steps.find(([k]) => k === 'ENTRYPOINT')![1]) as string[];
    const script = entrypoint.at(-1)!;
    const workdir = steps.filter(([k]) => k === 'WORKDIR').at(-1)![1];
    // dist/switchboard.mjs is the bin bundled (scripts/build.ts's CLI entry), built in an earlier stage.
    assert.equal(relative(workdir, script), 'dist/switchboard.mjs');
    assert.ok(read('scripts/build.ts').includes(`const CLI = '${manifest.bin.switchboard}';`), 'scripts/build.ts bundles the bin');
    assert.ok(steps.some(([k, a]) => k === 'RUN' && a === 'node scripts/build.ts'), 'the image runs the build');
    assert.ok(existsSync(join(ROOT, manifest.bin.switchboard)));
    const main = /import\s+'([^']+)'/.exec(read(manifest.bin.switchboard))![1]!;
    assert.ok(existsSync(join(ROOT, 'bin', main)), `${manifest.bin.switchboard} loads ${main}`);
  });

  it('every COPY from the build context exists and is not excluded by .dockerignore', () => {
    const copies = steps.filter(([k, args]) => k === 'COPY' && !args.startsWith('--from')).flatMap(([, args]) => args.split(/\s+/).slice(0, -1));
    assert.ok(copies.length > 0);
    for (const source of copies) {
      assert.ok(existsSync(join(ROOT, source)), `${source} exists`);
      // A directory is sent with the files in it that .dockerignore lets through.
      const files = statSync(join(ROOT, source)).isDirectory() ? [...sourceFiles(source.replace(/\/$/, ''))] : ignored(source) ? [] : [source];
      assert.ok(files.length > 0, `${source} is not excluded by .dockerignore`);
    }
    assert.ok(!ignored(manifest.bin.switchboard), 'the entrypoint script is sent');
    assert.ok(ignored('src/cli/main.test.ts') && !ignored('src/cli/main.ts'), 'tests stay out, sources go in');
  });

  it('runs a Node that strips types (>= 22.18), the major the project pins', () => {
    const major = Number(/ARG NODE_VERSION=(\d+)/.exec(read('Dockerfile'))![1]);
    assert.ok(major >= 23, `node:${major} images: 22.18+ is not guaranteed by a major-only tag below 23`);
    const pinned = JSON.parse(read('node_modules/node/package.json')) as { version: string };
    assert.equal(Number(pinned.version.split('.')[0]), major, 'the image runs the Node major the tests run on');
  });

  it('installs production dependencies only, and the shipped sources import nothing it leaves out', () => {
    assert.match(steps.find(([k, a]) => k === 'RUN' && a.includes('npm ci'))![1], /--omit=dev/);
    const notDirect = new Map<string, string>();
    for (const file of [...sourceFiles('src'), ...sourceFiles('bin')]) {
      for (const pkg of runtimePackages(readFileSync(join(ROOT, file), 'utf8'))) {
        const locked = lock.packages[`node_modules/${pkg}`];
        // What npm ci --omit=dev installs: the lock's top-level packages not marked dev.
        assert.ok(locked !== undefined && locked.dev !== true, `${file} imports ${pkg}, which npm ci --omit=dev does not install`);
        if (!Object.hasOwn(manifest.dependencies, pkg)) notDirect.set(pkg, file);
      }
    }
    // Installed only as another dependency's dependency: works while that one needs it. Listed so a new one is seen.
    assert.deepEqual([...notDirect.keys()].sort(), Object.keys(TRANSITIVE_ONLY).sort(), 'imported by shipped sources without being a direct dependency');
  });

  it('no production dependency needs an install script (the image installs with --ignore-scripts)', () => {
    const scripted = Object.entries(lock.packages).filter(([path, p]) => path.startsWith('node_modules/') && !p.dev && p.hasInstallScript).map(([path]) => path.slice('node_modules/'.length));
    assert.deepEqual(scripted.filter((name) => !Object.hasOwn(SKIPPABLE_INSTALL_SCRIPTS, name)), []);
  });

  it('the import scan sees value imports and skips type-only ones (so the check above can fail)', () => {
    assert.deepEqual(runtimePackages("import x from 'fast-check';\nimport type { T } from '@types/node';\nexport { y } from '@scope/pkg/sub';\nconst m = await import('openai');\nimport './local.ts';\nimport fs from 'node:fs';"), ['fast-check', '@scope/pkg', 'openai']);
  });
});
