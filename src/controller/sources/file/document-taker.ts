import type { KubeObject, SourcedObject } from '../../../api/gateway/object.ts';
import type { ConfigProblem } from '../types.ts';
import { apiGroupOf, isKnownKind } from '../known-kinds.ts';
import type { ParsedFile } from './parsed-file.ts';

// What both parsers (plain-yaml.ts, yaml-parse.ts) share once they have a document's value.

const OWN_GROUP = 'switchboard.dev';

/** Documents → objects of known kinds, problems and ignored kinds, whichever parser read them. */
export class DocumentTaker {
  readonly #file: string;
  readonly #objects: SourcedObject[] = [];
  readonly #problems: ConfigProblem[] = [];
  readonly #ignoredKinds = new Set<string>();

  constructor(file: string) {
    this.#file = file;
  }

  take(value: unknown, index: number, line: number): void {
    const file = this.#file;
    const origin = { file, document: index, line };
    const envelopeError = envelopeProblem(value);
    if (envelopeError) {
      this.#problems.push({ severity: 'error', file, document: index, line, path: envelopeError.path, message: envelopeError.message });
      return;
    }
    const object = value as KubeObject;
    if (!isKnownKind(object.apiVersion, object.kind)) {
      // In our own group an unknown kind is a typo, not someone else's object.
      if (apiGroupOf(object.apiVersion) === OWN_GROUP) {
        this.#problems.push({ severity: 'error', file, document: index, line, path: 'kind', object: { kind: object.kind, namespace: object.metadata.namespace, name: object.metadata.name }, message: `unknown kind ${object.kind} in ${OWN_GROUP}` });
        return;
      }
      this.#ignoredKinds.add(`${apiGroupOf(object.apiVersion) || 'core'}/${object.kind}`);
      return;
    }
    this.#objects.push({ object, origin });
  }

  result(): ParsedFile {
    return { objects: this.#objects, problems: this.#problems, syntaxOk: true, ignoredKinds: this.#ignoredKinds };
  }
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
export function firstLine(message: string): string {
  return message.split('\n', 1)[0].replace(/ at line \d+, column \d+:?$/, '');
}
