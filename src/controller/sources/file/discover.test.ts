import assert from 'node:assert/strict';
import fs, { mkdirSync, mkdtempSync, renameSync, rmSync, symlinkSync, unlinkSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it, mock } from 'node:test';
import { discoverYamlFiles, foldersToWatch, YamlFileListing } from './discover.ts';

const settle = (): Promise<void> => new Promise((ok) => setTimeout(ok, 15));
/** No file named by the watcher. */
const NONE: ReadonlySet<string> = new Set();

/** A folder tree: root/{a.yaml, b.yml, notes.txt, .hidden.yaml, sub/c.yaml, .git/d.yaml, dir.yaml/, link.yaml → ../outside/e.yaml, linked → ../outside/folder}. */
function tree(): { base: string; root: string } {
  const base = mkdtempSync(join(tmpdir(), 'discover-'));
  const root = join(base, 'root');
  for (const folder of ['root/sub', 'root/.git', 'root/dir.yaml', 'outside/folder']) mkdirSync(join(base, folder), { recursive: true });
  for (const file of ['root/a.yaml', 'root/b.yml', 'root/notes.txt', 'root/.hidden.yaml', 'root/sub/c.yaml', 'root/.git/d.yaml', 'outside/e.yaml', 'outside/folder/f.yaml']) writeFileSync(join(base, file), 'a: 1\n');
  symlinkSync('../outside/e.yaml', join(root, 'link.yaml'));
  symlinkSync('../outside/folder', join(root, 'linked'));
  return { base, root };
}

describe('discoverYamlFiles / foldersToWatch', () => {
  const { base, root } = tree();
  after(() => rmSync(base, { recursive: true, force: true }));

  it('lists YAML files, files and links to files, in sorted order; skips dot segments, other extensions and folders named .yaml; follows linked folders', () => {
    assert.deepEqual(discoverYamlFiles([root]), ['a.yaml', 'b.yml', 'link.yaml', 'linked/f.yaml', 'sub/c.yaml'].map((f) => join(root, f)));
  });

  it('a file given is listed as given, a missing path is not', () => {
    assert.deepEqual(discoverYamlFiles([join(root, 'notes.txt'), join(root, 'missing.yaml')]), [join(root, 'notes.txt')]);
  });

  it('watches every folder under a folder given (linked ones too), and a file given through its folder', () => {
    assert.deepEqual(foldersToWatch([root]), new Map(['', 'dir.yaml', 'linked', 'sub'].map((f) => [join(root, f), 'all'])));
    assert.deepEqual(foldersToWatch([join(root, 'a.yaml'), join(root, 'sub', 'c.yaml'), join(root, 'b.yml')]), new Map([[root, new Set(['a.yaml', 'b.yml'])], [join(root, 'sub'), new Set(['c.yaml'])]]));
  });
});

describe('YamlFileListing: listed again only when a folder changed', () => {
  const rows: { name: string; change: (root: string, base: string) => void; expect: (root: string) => string[] }[] = [
    { name: 'a file added to the folder given', change: (root) => writeFileSync(join(root, 'new.yaml'), 'a: 1\n'), expect: (root) => ['a.yaml', 'b.yml', 'link.yaml', 'linked/f.yaml', 'new.yaml', 'sub/c.yaml'].map((f) => join(root, f)) },
    { name: 'a file removed from a subfolder', change: (root) => unlinkSync(join(root, 'sub', 'c.yaml')), expect: (root) => ['a.yaml', 'b.yml', 'link.yaml', 'linked/f.yaml'].map((f) => join(root, f)) },
    { name: 'a file added to a linked folder', change: (_root, base) => writeFileSync(join(base, 'outside', 'folder', 'g.yaml'), 'a: 1\n'), expect: (root) => ['a.yaml', 'b.yml', 'link.yaml', 'linked/f.yaml', 'linked/g.yaml', 'sub/c.yaml'].map((f) => join(root, f)) },
    { name: 'a new subfolder with a file', change: (root) => { mkdirSync(join(root, 'deeper')); writeFileSync(join(root, 'deeper', 'h.yaml'), 'a: 1\n'); }, expect: (root) => ['a.yaml', 'b.yml', 'deeper/h.yaml', 'link.yaml', 'linked/f.yaml', 'sub/c.yaml'].map((f) => join(root, f)) },
  ];
  for (const row of rows) {
    it(row.name, async () => {
      const { base, root } = tree();
      try {
        await settle();
        const listing = new YamlFileListing([root], 0);
        assert.deepEqual(listing.files(NONE), discoverYamlFiles([root]));
        await settle();
        row.change(root, base);
        assert.deepEqual(listing.files(NONE), row.expect(root));
        assert.deepEqual(listing.files(NONE), discoverYamlFiles([root]));
      } finally {
        rmSync(base, { recursive: true, force: true });
      }
    });
  }

  it('kept while no folder changed: a file added behind a folder time set back is not seen, and the watch folders are the same Map', async () => {
    const { base, root } = tree();
    try {
      // A whole second: set back exactly below (a Date carries no nanoseconds).
      const past = new Date('2026-01-01T00:00:00Z');
      utimesSync(root, past, past);
      const listing = new YamlFileListing([root], 0);
      const files = listing.files();
      const folders = listing.folders();
      writeFileSync(join(root, 'a.yaml'), 'changed: 1\n');
      assert.deepEqual(listing.files(new Set([join(root, 'a.yaml')])), files, 'a content change is not a listing change');
      assert.equal(listing.folders(), folders);
      writeFileSync(join(root, 'hidden-by-time.yaml'), 'a: 1\n');
      utimesSync(root, past, past);
      assert.deepEqual(listing.files(NONE), files);
      // The watcher names the new file: listed again whatever the folder's time says; likewise for `all`.
      assert.ok(listing.files(new Set([join(root, 'hidden-by-time.yaml')])).includes(join(root, 'hidden-by-time.yaml')));
      writeFileSync(join(root, 'hidden-too.yaml'), 'a: 1\n');
      utimesSync(root, past, past);
      assert.ok(!listing.files(NONE).includes(join(root, 'hidden-too.yaml')));
      assert.ok(listing.files('all').includes(join(root, 'hidden-too.yaml')));
    } finally {
      rmSync(base, { recursive: true, force: true });
    }
  });

  it('a listing made while a folder had just changed is not trusted: listed again until it settles', async () => {
    const { base, root } = tree();
    try {
      const now = new Date(Math.floor(Date.now() / 1000) * 1000);
      utimesSync(root, now, now);
      const listing = new YamlFileListing([root], 60_000);
      listing.files();
      writeFileSync(join(root, 'new.yaml'), 'a: 1\n');
      utimesSync(root, now, now);
      assert.ok(listing.files(NONE).includes(join(root, 'new.yaml')));
    } finally {
      rmSync(base, { recursive: true, force: true });
    }
  });

  it('a folder renamed between reading its parent and reading it is skipped, and the next listing finds it under its new name', async () => {
    const { base, root } = tree();
    const readdir = fs.readdirSync;
    // What a tool writing a dot-folder and renaming it into place can do to a walk: a recursive
    // readdir threw ENOENT here, and the throw ended the gateway (CI, the hostile-config test).
    const racing = mock.method(fs, 'readdirSync', (folder: string, options: { withFileTypes: true }) => {
      const entries = readdir(folder, options);
      if (folder === root) renameSync(join(root, 'sub'), join(root, 'renamed'));
      return entries;
    }, { times: 1 });
    try {
      const listing = new YamlFileListing([root], 0);
      const during = listing.files(NONE);
      assert.equal(racing.mock.callCount(), 1);
      assert.ok(!during.some((f) => f.includes(`${join(root, 'sub')}/`) || f.includes('renamed')), during.join(', '));
      assert.deepEqual(listing.files(NONE), ['a.yaml', 'b.yml', 'link.yaml', 'linked/f.yaml', 'renamed/c.yaml'].map((f) => join(root, f)));
    } finally {
      racing.mock.restore();
      rmSync(base, { recursive: true, force: true });
    }
  });
});
