import { isAlias, isMap, isPair, isScalar, isSeq, type Document, type Node } from 'yaml';
import type { ConfigLimits } from './limits.ts';

/** The first thing in a document that is over a bound, with where it is. */
export interface BoundViolation {
  /** The whole message, starting with what kind of problem it is. */
  readonly message: string;
  /** Offset in the file's text, when the offending node is known. */
  readonly offset?: number;
}

/** What a file's documents have used so far; the bounds are per file, so counts carry over documents. */
export interface FileTally {
  nodes: number;
  aliases: number;
}

/**
 * Walks one composed document (iteratively: a deep document must not overflow the stack) and
 * returns the first bound it breaks: too many nodes or aliases in the file so far, nesting too
 * deep, or a mapping with the same key twice. Duplicate keys are checked here, in linear time,
 * because yaml's own check (`uniqueKeys`) compares every key with every other and made a
 * 50,000-key mapping take a minute.
 */
export function checkDocumentBounds(doc: Document.Parsed, limits: ConfigLimits, tally: FileTally): BoundViolation | undefined {
  const stack: { node: unknown; depth: number }[] = [{ node: doc.contents, depth: 0 }];
  while (stack.length > 0) {
    const { node, depth } = stack.pop() as { node: unknown; depth: number };
    if (node === null || node === undefined) continue;
    tally.nodes++;
    if (tally.nodes > limits.maxNodes) return { message: `over a configuration limit: more than ${limits.maxNodes} YAML nodes in the file`, offset: offsetOf(node) };
    if (isAlias(node)) {
      tally.aliases++;
      if (tally.aliases > limits.maxAliases) return { message: `over a configuration limit: more than ${limits.maxAliases} aliases in the file (alias expansion is bounded)`, offset: offsetOf(node) };
      continue;
    }
    if (isScalar(node)) continue;
    if (!isMap(node) && !isSeq(node)) continue;
    if (depth + 1 > limits.maxDepth) return { message: `over a configuration limit: nested deeper than ${limits.maxDepth} levels`, offset: offsetOf(node) };
    const seenKeys = isMap(node) ? new Set<string>() : undefined;
    // Pushed last-first so the walk (and the first violation it reports) follows the text.
    for (const item of [...node.items].reverse()) {
      if (!isPair(item)) {
        stack.push({ node: item, depth: depth + 1 });
        continue;
      }
      stack.push({ node: item.value, depth: depth + 1 }, { node: item.key, depth: depth + 1 });
    }
    if (!seenKeys) continue;
    for (const item of node.items) {
      if (!isPair(item) || !isScalar(item.key)) continue;
      const id = `${typeof item.key.value}:${String(item.key.value)}`;
      if (seenKeys.has(id)) return { message: `YAML syntax error: Map keys must be unique: "${String(item.key.value)}" appears twice`, offset: offsetOf(item.key) };
      seenKeys.add(id);
    }
  }
  return undefined;
}

function offsetOf(node: unknown): number | undefined {
  return (node as Node).range?.[0];
}
