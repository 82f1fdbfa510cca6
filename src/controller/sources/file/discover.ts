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
  const found = new Set<string>();
  for (const root of paths) {
    const stat = statOrUndefined(root);
    if (!stat) continue;
    if (!stat.isDirectory()) {
      found.add(root);
      continue;
    }
    const inFolder: string[] = [];
    for (const relative of fs.readdirSync(root, { recursive: true, encoding: 'utf8' })) {
      if (!YAML_EXTENSION.test(relative) || relative.split(path.sep).some((segment) => segment.startsWith('.'))) continue;
      const file = path.join(root, relative);
      if (statOrUndefined(file)?.isFile()) inFolder.push(file);
    }
    for (const file of inFolder.sort()) found.add(file);
  }
  return [...found];
}

/**
 * The folders to watch for `paths`, each with the file names that matter there (`all` for the
 * folders given, and every folder below them). A named file is watched through its folder:
 * editors and ConfigMap updates replace files by renaming, and a watch on the old inode would go
 * quiet after the first save. Node's own recursive watch on Linux has the same blind spot, so
 * every folder gets its own watch.
 */
export function foldersToWatch(paths: readonly string[]): Map<string, Set<string> | 'all'> {
  const folders = new Map<string, Set<string> | 'all'>();
  for (const root of paths) {
    const stat = statOrUndefined(root);
    if (!stat) continue;
    if (!stat.isDirectory()) {
      const folder = path.dirname(root);
      const names = folders.get(folder);
      if (names === 'all') continue;
      folders.set(folder, new Set([...(names ?? []), path.basename(root)]));
      continue;
    }
    folders.set(root, 'all');
    for (const relative of fs.readdirSync(root, { recursive: true, encoding: 'utf8' })) {
      if (relative.split(path.sep).some((segment) => segment.startsWith('.'))) continue;
      const folder = path.join(root, relative);
      if (statOrUndefined(folder)?.isDirectory()) folders.set(folder, 'all');
    }
  }
  return folders;
}

/** Paths that do not exist; a source refuses to start on them (a typo in `-f` is not an empty config). */
export function missingPaths(paths: readonly string[]): string[] {
  return paths.filter((p) => statOrUndefined(p) === undefined);
}

function statOrUndefined(p: string): fs.Stats | undefined {
  try {
    return fs.statSync(p);
  } catch {
    return undefined;
  }
}
