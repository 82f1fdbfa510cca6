/**
 * Bounds on what reading the configuration files may cost. A file over any of them is reported
 * like a YAML syntax error (the file's last good objects keep serving): the gateway never spends
 * unbounded time or memory on a file someone could write into the watched folder.
 */
export interface ConfigLimits {
  /**
   * Largest file read, in bytes; checked with stat before the file is read. The largest
   * Kubernetes object etcd stores is 1.5 MiB, so a file of 16 MiB already holds more than ten of
   * the biggest objects a cluster could; parsing that much YAML in the parser thread takes about a
   * second and a few hundred MiB (the YAML syntax tree is ~30x the text).
   */
  readonly maxFileBytes: number;
  /** All files together, in bytes: many files under the per-file limit must not add up to the 100 MB case. */
  readonly maxTotalBytes: number;
  /** YAML documents (`---`-separated) in one file. */
  readonly maxDocuments: number;
  /** Alias nodes (`*name`) in one file. Manifests rarely use any; generators never do. */
  readonly maxAliases: number;
  /** How many times aliases may expand (yaml's `maxAliasCount` for toJS, per document). */
  readonly maxAliasExpansion: number;
  /** YAML nodes (scalars, mappings, sequences, pairs' values) in one file. */
  readonly maxNodes: number;
  /** Nesting depth of mappings and sequences inside one document. */
  readonly maxDepth: number;
}

const MiB = 1024 * 1024;

export const DEFAULT_CONFIG_LIMITS: ConfigLimits = {
  maxFileBytes: 16 * MiB,
  maxTotalBytes: 64 * MiB,
  maxDocuments: 10_000,
  maxAliases: 1_000,
  maxAliasExpansion: 100,
  maxNodes: 1_000_000,
  maxDepth: 100,
};

/** `16 MiB`, `1.5 KiB`, `312 bytes`: sizes in messages a user reads. */
export function formatBytes(bytes: number): string {
  if (bytes < 1024) return `${bytes} bytes`;
  const [value, unit] = bytes < MiB ? [bytes / 1024, 'KiB'] : [bytes / MiB, 'MiB'];
  return `${Number.isInteger(value) ? value : value.toFixed(1)} ${unit}`;
}
