import { LineCounter, parseAllDocuments } from 'yaml';
import type { KubeObject, SourcedObject } from '../../../api/gateway/object.ts';
import type { ConfigProblem } from '../types.ts';
import { apiGroupOf, isKnownKind } from '../known-kinds.ts';

const OWN_GROUP = 'switchboard.dev';

export interface ParsedFile {
  /** The objects of known kinds, each with its origin. */
  readonly objects: readonly SourcedObject[];
  readonly problems: readonly ConfigProblem[];
  /** false when the YAML itself is broken: the caller keeps what the file contributed before. */
  readonly syntaxOk: boolean;
  /** `group/Kind` of objects skipped because the gateway does not read that kind. */
  readonly ignoredKinds: ReadonlySet<string>;
}

/**
 * Parses one multi-document YAML file into objects. A syntax error anywhere makes the whole file
 * unusable (a half-read file would silently drop objects); a document that parses but is not an
 * object is reported and skipped while its siblings are kept.
 */
export function parseYamlFile(text: string, file: string): ParsedFile {
  const lineCounter = new LineCounter();
  const documents = parseAllDocuments(text, { lineCounter, prettyErrors: false });
  // An empty file or one holding only comments parses as an empty stream.
  if (!Array.isArray(documents)) return { objects: [], problems: [], syntaxOk: true, ignoredKinds: new Set() };

  const syntaxProblems: ConfigProblem[] = [];
  documents.forEach((doc, index) => {
    for (const err of doc.errors) {
      const pos = err.linePos?.[0] ?? lineCounter.linePos(err.pos[0]);
      syntaxProblems.push({
        severity: 'error', file, document: index, line: pos.line, column: pos.col,
        message: `YAML syntax error: ${firstLine(err.message)}`,
      });
    }
  });
  if (syntaxProblems.length > 0) return { objects: [], problems: syntaxProblems, syntaxOk: false, ignoredKinds: new Set() };

  const objects: SourcedObject[] = [];
  const problems: ConfigProblem[] = [];
  const ignoredKinds = new Set<string>();
  documents.forEach((doc, index) => {
    if (doc.contents === null) return; // `---` with nothing after it
    const start = doc.contents.range?.[0] ?? doc.range[0];
    const origin = { file, document: index, line: lineCounter.linePos(start).line };
    const value: unknown = doc.toJS({ maxAliasCount: 100 });
    const envelopeError = envelopeProblem(value);
    if (envelopeError) {
      problems.push({ severity: 'error', file, document: index, line: origin.line, path: envelopeError.path, message: envelopeError.message });
      return;
    }
    const object = value as KubeObject;
    if (!isKnownKind(object.apiVersion, object.kind)) {
      // In our own group an unknown kind is a typo, not someone else's object.
      if (apiGroupOf(object.apiVersion) === OWN_GROUP) {
        problems.push({ severity: 'error', file, document: index, line: origin.line, path: 'kind', object: { kind: object.kind, namespace: object.metadata.namespace, name: object.metadata.name }, message: `unknown kind ${object.kind} in ${OWN_GROUP}` });
        return;
      }
      ignoredKinds.add(`${apiGroupOf(object.apiVersion) || 'core'}/${object.kind}`);
      return;
    }
    objects.push({ object, origin });
  });
  return { objects, problems, syntaxOk: true, ignoredKinds };
}

/** The checks every Kubernetes-style object must pass before its kind even matters. */
function envelopeProblem(value: unknown): { path?: string; message: string } | undefined {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    return { message: 'document is not an object: expected a mapping with apiVersion, kind and metadata.name' };
  }
  const record = value as Record<string, unknown>;
  if (!isNonEmptyString(record.apiVersion)) return { path: 'apiVersion', message: 'apiVersion is required and must be a non-empty string' };
  if (!isNonEmptyString(record.kind)) return { path: 'kind', message: 'kind is required and must be a non-empty string' };
  const metadata = record.metadata;
  if (metadata === null || typeof metadata !== 'object' || Array.isArray(metadata)) return { path: 'metadata', message: 'metadata is required and must be a mapping' };
  const meta = metadata as Record<string, unknown>;
  if (!isNonEmptyString(meta.name)) return { path: 'metadata.name', message: 'metadata.name is required and must be a non-empty string' };
  if (meta.namespace !== undefined && !isNonEmptyString(meta.namespace)) return { path: 'metadata.namespace', message: 'metadata.namespace must be a non-empty string when set' };
  return undefined;
}

function isNonEmptyString(v: unknown): v is string {
  return typeof v === 'string' && v.length > 0;
}

/** yaml's messages carry a multi-line source excerpt; the location is reported separately. */
function firstLine(message: string): string {
  return message.split('\n', 1)[0].replace(/ at line \d+, column \d+:?$/, '');
}
