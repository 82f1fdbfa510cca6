import fs from 'node:fs';
import path from 'node:path';

const YAML_EXTENSION = /\.ya?ml$/i;

/**
 * The YAML files named by `paths`, in a stable order: files as given, folders searched
 * recursively. Entries whose path has a segment starting with `.` are skipped: editors' swap
 * files and the `..data` folders of a mounted Kubernetes ConfigMap would otherwise be read twice.
 * Symbolic links to files are followed (a ConfigMap mount is made of them).
 */
export function discoverYamlFiles(paths: readonly string[]): string[] {
  return listYamlFiles(paths).files;
}

/** What a listing depended on: each path given and each folder listed, with its stamp then. */
type Stamps = Map<string, string>;

interface Listing {
  readonly files: string[];
  /** foldersToWatch()'s answer. */
  readonly folders: Map<string, Set<string> | 'all'>;
  readonly stamps: Stamps;
}

/**
 * discoverYamlFiles() and foldersToWatch() kept between scans (issue 15: a file edit re-listed 100
 * files and stat'ed each, ~1.5 ms per edit, in the scan and again for the watch). Listed again when
 *   - the caller names a file the listing does not hold, or says any file may have changed (`all`):
 *     the watcher's events name a new file (or name none), so a file added is listed at once;
 *   - a path given or a folder listed changed since: a folder's modification time changes when an
 *     entry is added, removed or renamed in it (a new subfolder changes its parent's) — this
 *     catches what the events miss (a folder watched only after the listing);
 *   - a folder changed less than `settleMs` before the listing: a file system's timestamps are
 *     coarse (Linux stamps with a clock of a few ms), so a change made just after the listing
 *     could carry the same time; such a listing is taken again until the folder has settled.
 */
export class YamlFileListing {
  readonly #paths: readonly string[];
  readonly #settleMs: number;
  #kept: (Listing & { readonly trusted: boolean; readonly resolved: ReadonlySet<string> }) | undefined;

  constructor(paths: readonly string[], settleMs = 100) {
    this.#paths = paths;
    this.#settleMs = settleMs;
  }

  /**
   * discoverYamlFiles(paths) as of now (a copy the caller may keep). `touched`: the files (absolute
   * paths) that may have changed since the previous call, or `all` (listed again).
   */
  files(touched: ReadonlySet<string> | 'all' = 'all'): string[] {
    return this.#listing(touched).files.slice();
  }

  /** foldersToWatch(paths) as of now; the same Map object while nothing changed (read only). */
  folders(): ReadonlyMap<string, ReadonlySet<string> | 'all'> {
    return this.#listing(new Set()).folders;
  }

  #listing(touched: ReadonlySet<string> | 'all'): Listing {
    const kept = this.#kept;
    if (kept !== undefined && kept.trusted && touched !== 'all' && isSubset(touched, kept.resolved) && sameStamps(kept.stamps)) return kept;
    const listedAtMs = Date.now();
    const { newestMs, ...listing } = listYamlFiles(this.#paths);
    this.#kept = { ...listing, trusted: newestMs < listedAtMs - this.#settleMs, resolved: new Set(listing.files.map((file) => path.resolve(file))) };
    return listing;
  }
}

function isSubset(some: ReadonlySet<string>, all: ReadonlySet<string>): boolean {
  for (const item of some) if (!all.has(item)) return false;
  return true;
}

function sameStamps(stamps: Stamps): boolean {
  for (const [p, stamp] of stamps) if (stampOf(statOrUndefined(p)) !== stamp) return false;
  return true;
}

/** A path's type, and for a folder its modification time (ns): what says its listing may have changed. */
function stampOf(stat: fs.BigIntStats | undefined): string {
  if (stat === undefined) return 'missing';
  return stat.isDirectory() ? `dir:${stat.mtimeNs}` : 'other';
}

function listYamlFiles(paths: readonly string[]): Listing & { newestMs: number } {
  const found = new Set<string>();
  const folders = new Map<string, Set<string> | 'all'>();
  const stamps: Stamps = new Map();
  let newestMs = 0;
  const stampFolder = (folder: string, stat: fs.BigIntStats): void => {
    stamps.set(folder, stampOf(stat));
    newestMs = Math.max(newestMs, Number(stat.mtimeNs / 1_000_000n));
  };
  for (const root of paths) {
    const stat = statOrUndefined(root);
    stamps.set(root, stampOf(stat));
    if (!stat) continue;
    if (!stat.isDirectory()) {
      found.add(root);
      // A named file is watched through its folder: editors and ConfigMap updates replace files by
      // renaming, and a watch on the old inode would go quiet after the first save.
      const folder = path.dirname(root);
      const names = folders.get(folder);
      if (names !== 'all') folders.set(folder, new Set([...(names ?? []), path.basename(root)]));
      continue;
    }
    stampFolder(root, stat);
    folders.set(root, 'all');
    const inFolder: string[] = [];
    // Walked one folder at a time, not with a recursive readdir: that one throws when a folder it
    // found is renamed before it is read (a tool writing a dot-folder, then renaming it into place),
    // and it reads dot-folders only for them to be skipped.
    const descended = new Set<string>([folderIdentity(stat)]);
    const pending = [root];
    for (let folder = pending.pop(); folder !== undefined; folder = pending.pop()) {
      let entries: fs.Dirent[];
      try {
        entries = fs.readdirSync(folder, { withFileTypes: true });
      } catch (err) {
        // Gone (or replaced by a file) since its parent was read: its stamp, taken before, now
        // differs, so the next scan lists again and finds it under its new name.
        if (folder !== root && isGone(err)) continue;
        throw err;
      }
      for (const entry of entries) {
        if (entry.name.startsWith('.')) continue;
        const file = path.join(folder, entry.name);
        // With types: a plain file needs no stat; a folder or a symbolic link (followed) is stat'ed.
        const linked = entry.isDirectory() || entry.isSymbolicLink() ? statOrUndefined(file) : undefined;
        if (linked?.isDirectory()) {
          // A link back up the tree (or a second link to one folder) is not walked twice.
          const identity = folderIdentity(linked);
          if (descended.has(identity)) continue;
          descended.add(identity);
          stampFolder(file, linked);
          folders.set(file, 'all');
          pending.push(file);
          continue;
        }
        if (YAML_EXTENSION.test(entry.name) && (entry.isFile() || linked?.isFile())) inFolder.push(file);
      }
    }
    for (const file of inFolder.sort()) found.add(file);
  }
  return { files: [...found], folders, stamps, newestMs };
}

/**
 * The folders to watch for `paths`, each with the file names that matter there (`all` for the
 * folders given, and every folder below them). A named file is watched through its folder:
 * editors and ConfigMap updates replace files by renaming, and a watch on the old inode would go
 * quiet after the first save. Node's own recursive watch on Linux has the same blind spot, so
 * every folder gets its own watch.
 */
export function foldersToWatch(paths: readonly string[]): Map<string, Set<string> | 'all'> {
  return listYamlFiles(paths).folders;
}

/** Paths that do not exist; a source refuses to start on them (a typo in `-f` is not an empty config). */
export function missingPaths(paths: readonly string[]): string[] {
  return paths.filter((p) => statOrUndefined(p) === undefined);
}

function folderIdentity(stat: fs.BigIntStats): string {
  return `${stat.dev}:${stat.ino}`;
}

function isGone(err: unknown): boolean {
  const code = (err as NodeJS.ErrnoException).code;
  return code === 'ENOENT' || code === 'ENOTDIR';
}

function statOrUndefined(p: string): fs.BigIntStats | undefined {
  try {
    return fs.statSync(p, { bigint: true });
  } catch {
    return undefined;
  }
}
