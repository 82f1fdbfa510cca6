import type { Condition, ObjectStatus, SourcedObject } from '../../api/gateway/object.ts';
import { missingPaths } from '../../controller/sources/file/discover.ts';
import { FileSet } from '../../controller/sources/file/file-set.ts';
import type { ConfigProblem } from '../../controller/sources/types.ts';
import { ObjectStore } from '../../controller/store/store.ts';
import { translate } from '../../controller/translate/index.ts';
import { schemaValidationFindings } from './schema-hook.ts';

export interface Findings {
  readonly problems: readonly ConfigProblem[];
  readonly files: number;
  readonly objects: number;
  /** The objects read, for `--show-defaults`. */
  readonly sourced: readonly SourcedObject[];
}

/** Condition types whose False status means the object does not work as written. */
const CHECKED_CONDITIONS = new Set(['Accepted', 'ResolvedRefs']);

/**
 * Reasons reported as notes, not errors: a reference that may exist in the cluster, and a field
 * this gateway does not apply yet (PartiallyApplied, Unsupported — docs/policies.md "What is not
 * applied yet"): the config is valid, the note says what will be ignored and why.
 */
const NOTE_REASONS = /NotFound$|^PartiallyApplied$|^Unsupported$/;

/**
 * Everything `validate` can find without a running gateway: YAML and envelope errors, duplicates,
 * schema violations, and the conditions the translator would set. A reference to an object that
 * is not in the given files is only a note: it may well exist in the cluster the files go to.
 * Files are read with the same limits as `run` (file size, documents, aliases, nodes, depth, all
 * files together); a file over one is an error like a YAML syntax error.
 */
export async function collectFindings(paths: readonly string[], opts: { proxyModelsEnabled?: boolean } = {}): Promise<Findings> {
  const missing: ConfigProblem[] = missingPaths(paths).map((file) => ({ severity: 'error', file, message: 'path not found' }));
  const scan = await new FileSet(paths).scan();
  const store = new ObjectStore();
  store.replace(scan.snapshot);
  // Translated as `run --enable-proxy-models` would (or would not): the ProxyModels' statuses are the API's answer, not "disabled".
  const { statuses } = translate(store.objects(), { proxyModels: opts.proxyModelsEnabled === true });
  const conditionFindings = statuses.flatMap((status) => findingsOf(status, store));
  return {
    problems: [...missing, ...store.problems(), ...schemaValidationFindings(store.sourced(), opts), ...conditionFindings],
    files: new Set(scan.snapshot.objects.map((o) => o.origin?.file)).size,
    objects: store.objects().length,
    sourced: store.sourced(),
  };
}

function findingsOf(status: ObjectStatus, store: ObjectStore): ConfigProblem[] {
  const { kind, metadata } = status;
  const origin = store.originOf(kind, metadata.name, metadata.namespace);
  const findings: ConfigProblem[] = [];
  visitConditions(status.status, 'status', (condition, path) => {
    if (!CHECKED_CONDITIONS.has(condition.type) || condition.status !== 'False') return;
    findings.push({
      severity: NOTE_REASONS.test(condition.reason) ? 'note' : 'error',
      file: origin?.file, document: origin?.document, line: origin?.line,
      object: { kind, namespace: metadata.namespace, name: metadata.name },
      path,
      message: `${condition.type}=False (${condition.reason}): ${condition.message}`,
    });
  });
  return findings;
}

function visitConditions(value: unknown, path: string, visit: (condition: Condition, path: string) => void): void {
  if (Array.isArray(value)) {
    value.forEach((item, index) => visitConditions(item, `${path}[${index}]`, visit));
    return;
  }
  if (value === null || typeof value !== 'object') return;
  for (const [field, child] of Object.entries(value)) {
    if (field === 'conditions' && Array.isArray(child)) {
      for (const condition of child as Condition[]) visit(condition, path);
    } else {
      visitConditions(child, `${path}.${field}`, visit);
    }
  }
}
