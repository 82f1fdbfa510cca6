import { Composer, LineCounter, Parser, type Document } from 'yaml';
import type { ConfigProblem } from '../types.ts';
import { DocumentTaker, firstLine } from './document-taker.ts';
import type { ConfigLimits } from './limits.ts';
import { brokenFile, type ParsedFile } from './parsed-file.ts';
import { checkDocumentBounds, type FileTally } from './yaml-bounds.ts';

// The slow path of parseYamlFile (parse.ts), in its own module: yaml's ~70 modules (~11 MiB in the
// parser thread) load only when a file needs it, not when every file is plain YAML.

const MAX_REPORTED_SYNTAX_ERRORS = 20;

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
