/**
 * Fuzz target for the configuration file parser (src/controller/sources/file/parse.ts), which
 * takes whatever bytes land in the watched folder. Returns for any input; throws only on a
 * defect: an exception escaping the parser, a broken file that still yields objects or has no
 * error naming it, an object without the envelope every object must have, a result the parser
 * thread could not post back (not structured-cloneable), or output that grew past the alias
 * expansion bound.
 */
import { DEFAULT_CONFIG_LIMITS, type ConfigLimits } from '../src/controller/sources/file/limits.ts';
import { parseYamlFile } from '../src/controller/sources/file/parse.ts';

const FILE = 'fuzz.yaml';
/** The defaults, with the counts lowered so inputs of fuzzing size can reach every bound. */
export const FUZZ_LIMITS: ConfigLimits = { ...DEFAULT_CONFIG_LIMITS, maxDocuments: 50, maxAliases: 40, maxNodes: 5_000, maxDepth: 30 };
/** Aliases may expand each anchor at most `maxAliasExpansion` times, so output stays within a multiple of the input. */
const MAX_GROWTH = 4 * FUZZ_LIMITS.maxAliasExpansion;

export function fuzz(data: Buffer): void {
  check(data.toString('utf8'));
}

export function check(text: string): void {
  let parsed;
  try {
    parsed = parseYamlFile(text, FILE, FUZZ_LIMITS);
  } catch (err) {
    throw new Error(`parseYamlFile threw: ${(err as Error).stack ?? String(err)}`, { cause: err });
  }
  const { objects, problems, syntaxOk } = parsed;
  for (const problem of problems) {
    if (problem.file !== FILE || typeof problem.message !== 'string' || problem.message === '') throw new Error(`a problem without file or message: ${JSON.stringify(problem)}`);
  }
  if (!syntaxOk) {
    if (objects.length > 0) throw new Error('a broken file yielded objects');
    if (!problems.some((p) => p.severity === 'error')) throw new Error('a broken file without an error');
    if (problems.length > 21) throw new Error(`${problems.length} problems reported for one file`);
  }
  if (objects.length > FUZZ_LIMITS.maxDocuments) throw new Error(`${objects.length} objects, more than the document limit`);
  for (const { object, origin } of objects) {
    if (typeof object.apiVersion !== 'string' || typeof object.kind !== 'string' || typeof object.metadata?.name !== 'string' || object.metadata.name === '') throw new Error(`an object without its envelope: ${JSON.stringify(object).slice(0, 200)}`);
    if (origin?.file !== FILE || !Number.isInteger(origin.document) || origin.line < 1) throw new Error(`a bad origin: ${JSON.stringify(origin)}`);
  }
  let cloned: string;
  try {
    cloned = JSON.stringify(structuredClone(parsed.objects));
  } catch (err) {
    throw new Error(`the result cannot be posted from the parser thread: ${(err as Error).message}`, { cause: err });
  }
  if (cloned.length > MAX_GROWTH * (text.length + 100)) throw new Error(`output of ${cloned.length} characters from ${text.length} of input`);
}
