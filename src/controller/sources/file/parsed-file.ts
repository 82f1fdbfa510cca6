import type { SourcedObject } from '../../../api/gateway/object.ts';
import type { ConfigProblem } from '../types.ts';

// A leaf (no parser): the config thread and ParserThread's side need these without loading yaml.

export interface ParsedFile {
  /** The objects of known kinds, each with its origin. */
  readonly objects: readonly SourcedObject[];
  readonly problems: readonly ConfigProblem[];
  /**
   * false when the file as a whole is unusable (broken YAML, or over a limit): the caller keeps
   * what the file contributed before.
   */
  readonly syntaxOk: boolean;
  /** `group/Kind` of objects skipped because the gateway does not read that kind. */
  readonly ignoredKinds: ReadonlySet<string>;
}

/** A file that contributes nothing now: broken YAML, over a limit, unreadable. */
export function brokenFile(problems: readonly ConfigProblem[]): ParsedFile {
  return { objects: [], problems, syntaxOk: false, ignoredKinds: new Set() };
}
