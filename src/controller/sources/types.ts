import type { SourcedObject } from '../../api/gateway/object.ts';

/**
 * Something wrong with the configuration as written: a YAML error, a document that is not an
 * object, a duplicate, a condition the translator reported. Every field that can locate it is
 * filled so a user can jump straight to the spot.
 */
export interface ConfigProblem {
  /** `note` never fails `validate` and never counts as a source error (e.g. a dangling reference). */
  severity: 'error' | 'note';
  file?: string;
  /** 0-based YAML document index inside `file`. */
  document?: number;
  /** 1-based line and column. */
  line?: number;
  column?: number;
  object?: { kind: string; namespace?: string; name: string };
  /** Field path inside the object, e.g. `spec.rules[0].backendRefs[1]`. */
  path?: string;
  message: string;
}

/** Everything a source knows at one moment: the objects to serve and what went wrong reading them. */
export interface SourceSnapshot {
  readonly objects: readonly SourcedObject[];
  readonly problems: readonly ConfigProblem[];
}

/**
 * Where objects come from (files today, a Kubernetes API server later). A source calls
 * `onSnapshot` with the complete current set once started and again after every change;
 * everything after the source is the same code whatever the source is.
 */
export interface ObjectSource {
  /** Resolves after the first snapshot was delivered; rejects when the source cannot start at all. */
  start(onSnapshot: (snapshot: SourceSnapshot) => void): Promise<void>;
  stop(): Promise<void>;
}
