import { createRequire } from 'node:module';
import { DocumentTaker, firstLine } from './document-taker.ts';
import { DEFAULT_CONFIG_LIMITS, type ConfigLimits } from './limits.ts';
import { parsePlainYaml } from './plain-yaml.ts';
import { brokenFile, type ParsedFile } from './parsed-file.ts';
import type * as YamlParse from './yaml-parse.ts';

// Where they were first defined; the leaf lets a thread that parses nothing skip yaml's modules.
export { brokenFile, type ParsedFile };

/**
 * The reference parser (yaml), loaded the first time a file is not plain YAML: a thread whose files
 * all take the fast path never loads yaml's modules. Synchronous, as parsing is (the parser thread).
 */
let yamlParse: typeof YamlParse | undefined;
const withYaml = (): typeof YamlParse => (yamlParse ??= createRequire(import.meta.url)('./yaml-parse.ts') as typeof YamlParse);

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
  return withYaml().parseWithYaml(text, file, limits);
}
