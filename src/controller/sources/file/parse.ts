import { Composer, LineCounter, Parser, type Document } from 'yaml';
import type { KubeObject, SourcedObject } from '../../../api/gateway/object.ts';
import type { ConfigProblem } from '../types.ts';
import { apiGroupOf, isKnownKind } from '../known-kinds.ts';
import { DEFAULT_CONFIG_LIMITS, type ConfigLimits } from './limits.ts';
import { parsePlainYaml } from './plain-yaml.ts';
import { brokenFile, type ParsedFile } from './parsed-file.ts';
import { checkDocumentBounds, type FileTally } from './yaml-bounds.ts';

// Where they were first defined; the leaf lets a thread that parses nothing skip yaml's modules.
export { brokenFile, type ParsedFile };

const OWN_GROUP = 'switchboard.dev';
const MAX_REPORTED_SYNTAX_ERRORS = 20;

/**
 * Parses one multi-document YAML file into objects. A syntax error anywhere makes the whole file
 * unusable (a half-read file would silently drop objects); a document that parses but is not an
 * object is reported and skipped while its siblings are kept. The work is bounded by `limits`
 * (documents, nodes, aliases and their expansion, depth); a file over one is unusable the same
 * way, and nothing the text holds makes this function throw.
 */
export function parseYamlFile(text: string, file: string, limits: ConfigLimits = DEFAULT_CONFIG_LIMITS): ParsedFile {
  try {
    return parseBounded(text, file, limits);
  } catch (err) {
    // yaml reports its own stack overflows as errors; anything still thrown is a parser defect we
    // must not let take the gateway (or `validate`) down with it.
    return brokenFile([{ severity: 'error', file, message: `cannot parse the file: ${firstLine((err as Error).message ?? String(err))}` }]);
  }
}

function parseBounded(text: string, file: string, limits: ConfigLimits): ParsedFile {
  const plain = parsePlainYaml(text, limits);
  if (plain) {
    const taken = new DocumentTaker(file);
    for (const { value, index, line } of plain) taken.take(value, index, line);
    return taken.result();
  }
  return parseWithYaml(text, file, limits);
}

/** The reference parser: every file the fast path (plain-yaml.ts) does not take, with yaml's messages and bounds. */
export function parseWithYaml(text: string, file: string, limits: ConfigLimits): ParsedFile {
  const lineCounter = new LineCounter();
  const lineOf = (offset: number): { line: number; col: number } => lineCounter.linePos(offset);
  const documents = composeDocuments(text, lineCounter, limits.maxDocuments);
  if (documents === 'too many') {
    return brokenFile([{ severity: 'error', file, document: limits.maxDocuments, message: `more than ${limits.maxDocuments} YAML documents in the file` }]);
  }

  const syntaxProblems: ConfigProblem[] = [];
  const tally: FileTally = { nodes: 0, aliases: 0 };
  for (const [index, doc] of documents.entries()) {
    for (const err of doc.errors) {
      const pos = err.linePos?.[0] ?? lineOf(err.pos[0]);
      syntaxProblems.push({
        severity: 'error', file, document: index, line: pos.line, column: pos.col,
        message: `YAML syntax error: ${firstLine(err.message)}`,
      });
    }
    if (syntaxProblems.length > 0) continue;
    const violation = checkDocumentBounds(doc, limits, tally);
    if (violation) {
      const pos = violation.offset === undefined ? undefined : lineOf(violation.offset);
      return brokenFile([{ severity: 'error', file, document: index, line: pos?.line, column: pos?.col, message: violation.message }]);
    }
  }
  if (syntaxProblems.length > MAX_REPORTED_SYNTAX_ERRORS) {
    // One broken line can make every line after it an error: the log and /status need the first few.
    const more = syntaxProblems.length - MAX_REPORTED_SYNTAX_ERRORS;
    return brokenFile([...syntaxProblems.slice(0, MAX_REPORTED_SYNTAX_ERRORS), { severity: 'error', file, message: `and ${more} more YAML syntax errors in this file` }]);
  }
  if (syntaxProblems.length > 0) return brokenFile(syntaxProblems);

  const taken = new DocumentTaker(file);
  for (const [index, doc] of documents.entries()) {
    if (doc.contents === null) continue; // `---` with nothing after it
    const start = doc.contents.range?.[0] ?? doc.range[0];
    const line = lineOf(start).line;
    let value: unknown;
    try {
      value = doc.toJS({ maxAliasCount: limits.maxAliasExpansion });
    } catch (err) {
      // yaml's alias-expansion guard ("Excessive alias count…") or an unresolved alias.
      return brokenFile([{ severity: 'error', file, document: index, line, message: `over a configuration limit: ${firstLine((err as Error).message)} (aliases may expand at most ${limits.maxAliasExpansion} times)` }]);
    }
    taken.take(value, index, line);
  }
  return taken.result();
}

/** Documents → objects of known kinds, problems and ignored kinds, whichever parser read them. */
class DocumentTaker {
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

/**
 * The file's documents, composed one at a time so a file of millions of tiny documents is
 * refused after `maxDocuments` instead of being held whole. Keys are not checked for duplicates
 * here (see checkDocumentBounds).
 */
function composeDocuments(text: string, lineCounter: LineCounter, maxDocuments: number): Document.Parsed[] | 'too many' {
  const parser = new Parser(lineCounter.addNewLine);
  const composer = new Composer({ prettyErrors: false, uniqueKeys: false });
  const documents: Document.Parsed[] = [];
  for (const doc of composer.compose(parser.parse(text))) {
    if (documents.length >= maxDocuments) return 'too many';
    documents.push(doc);
  }
  return documents;
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
