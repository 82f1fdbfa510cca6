import fs from 'node:fs';
import type { SourcedObject } from '../../../api/gateway/object.ts';
import type { ConfigProblem, SourceSnapshot } from '../types.ts';
import { discoverYamlFiles } from './discover.ts';
import { parseYamlFile } from './parse.ts';

interface FileEntry {
  readonly text: string;
  /** What the file contributes now: its own objects, or those of its last good version while broken. */
  readonly objects: readonly SourcedObject[];
  readonly problems: readonly ConfigProblem[];
}

export interface ScanResult {
  /** false when no file was added, removed or changed since the previous scan. */
  readonly changed: boolean;
  readonly snapshot: SourceSnapshot;
  /** Problems of files (re)read in this scan only: what is new to log. */
  readonly newProblems: readonly ConfigProblem[];
  /** `group/Kind` of ignored objects in files (re)read in this scan. */
  readonly ignoredKinds: ReadonlySet<string>;
  /** Files found broken in this scan → how many objects of their last good version they still contribute. */
  readonly keptFromBrokenFiles: ReadonlyMap<string, number>;
}

/**
 * The YAML files under a set of paths and what each contributes, re-read on demand. A file whose
 * YAML breaks keeps contributing the objects of its last good version, so a typo never empties
 * the gateway; a file that disappears takes its objects with it.
 */
export class FileSet {
  readonly #paths: readonly string[];
  readonly #entries = new Map<string, FileEntry>();

  constructor(paths: readonly string[]) {
    this.#paths = paths;
  }

  scan(): ScanResult {
    const files = discoverYamlFiles(this.#paths);
    let changed = false;
    const newProblems: ConfigProblem[] = [];
    const ignoredKinds = new Set<string>();
    const keptFromBrokenFiles = new Map<string, number>();
    const seen = new Set<string>();

    for (const file of files) {
      const text = readOrUndefined(file);
      if (text === undefined) continue; // deleted between listing and reading: same as gone
      seen.add(file);
      const previous = this.#entries.get(file);
      if (previous?.text === text) continue;
      changed = true;
      const parsed = parseYamlFile(text, file);
      for (const kind of parsed.ignoredKinds) ignoredKinds.add(kind);
      const entry = parsed.syntaxOk
        ? { text, objects: parsed.objects, problems: parsed.problems }
        : { text, objects: previous?.objects ?? [], problems: parsed.problems };
      if (!parsed.syntaxOk) keptFromBrokenFiles.set(file, entry.objects.length);
      newProblems.push(...entry.problems);
      this.#entries.set(file, entry);
    }
    for (const file of [...this.#entries.keys()]) {
      if (seen.has(file)) continue;
      this.#entries.delete(file);
      changed = true;
    }

    // Map iteration follows insertion order; rebuild in discovery order so snapshots are stable.
    const ordered = files.filter((f) => seen.has(f)).map((f) => this.#entries.get(f) as FileEntry);
    return {
      changed,
      snapshot: { objects: ordered.flatMap((e) => e.objects), problems: ordered.flatMap((e) => e.problems) },
      newProblems,
      ignoredKinds,
      keptFromBrokenFiles,
    };
  }
}

function readOrUndefined(file: string): string | undefined {
  try {
    return fs.readFileSync(file, 'utf8');
  } catch {
    return undefined;
  }
}
