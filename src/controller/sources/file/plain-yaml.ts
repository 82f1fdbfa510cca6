import { constructFromEvents, EVENT_ID, parseEvents, type Event } from 'js-yaml';
import type { ConfigLimits } from './limits.ts';

/** One document of a file, as both parsers hand it on: its JS value and where its content starts. */
export interface PlainDocument {
  /** 0-based index of the document in the file (empty documents count). */
  readonly index: number;
  /** 1-based line of the document's content. */
  readonly line: number;
  readonly value: unknown;
}

/**
 * Files up to this size may take the fast path. It bounds the event list js-yaml builds before
 * constructing (~100 bytes an event; at worst one event per two bytes of text: ~50 MiB).
 */
export const PLAIN_YAML_MAX_BYTES = 1024 * 1024;

/**
 * The fast path of parseYamlFile (parse.ts): js-yaml builds the values directly from a flat event
 * list, ~15x faster than composing yaml's syntax tree (10k HTTPRoutes in 100 files: ~0.1 s
 * instead of ~1.5 s), which is most of a large configuration's time to ready.
 *
 * It takes only what both parsers read the same way and the bounds need no syntax tree for:
 * plain YAML 1.2 (core schema) with no anchor, alias, tag or directive, no merge key, no
 * duplicate key, at most `limits.maxDocuments` documents, `limits.maxNodes` nodes and
 * `limits.maxDepth` levels, in a file of at most PLAIN_YAML_MAX_BYTES. For anything else —
 * including every syntax error — it answers undefined and the caller parses the file with yaml,
 * whose messages, positions and limit checks stay the reference (plain-yaml.test.ts checks both
 * paths agree on the repository's YAML files).
 */
export function parsePlainYaml(text: string, limits: ConfigLimits): PlainDocument[] | undefined {
  if (text.length > PLAIN_YAML_MAX_BYTES || MAY_DIFFER.test(text)) return undefined;
  let events: Event[];
  let values: unknown[];
  try {
    events = parseEvents(text, { maxDepth: limits.maxDepth });
    if (!withinBounds(events, limits)) return undefined;
    // maxAliases 0: an alias is refused (none is expected after the check above).
    values = constructFromEvents(events, { source: text, maxAliases: 0 });
  } catch {
    return undefined;
  }
  const lines = lineStarts(text);
  const documents: PlainDocument[] = [];
  let index = -1;
  for (let i = 0; i < events.length; i++) {
    const event = events[i] as Event;
    if (event.type !== EVENT_ID.DOCUMENT) continue;
    index++;
    const root = events[i + 1] as Event | undefined;
    const start = root === undefined ? -1 : root.type === EVENT_ID.SCALAR ? root.valueStart : root.type === EVENT_ID.MAPPING || root.type === EVENT_ID.SEQUENCE ? root.start : -1;
    // An empty document (`---` with nothing after it): yaml skips one at the end of a file but
    // reads one between two `---` as a null document; it decides.
    if (start < 0) return undefined;
    documents.push({ index, line: lineOf(lines, start), value: values[index] });
  }
  // Each document is one value; anything else means we misread the event list.
  return index + 1 === values.length ? documents : undefined;
}

/**
 * Text in which the two parsers could read something differently, or that needs yaml's own
 * bounds: anchors, aliases and tags (`&`, `*`, `!` where a node may start), merge keys, directives,
 * `__proto__` keys. A false alarm only costs the slow path.
 */
const MAY_DIFFER = /(?:^|[\s[{,:?-])[&*!]|<<|^%|__proto__/m;

function withinBounds(events: readonly Event[], limits: ConfigLimits): boolean {
  let documents = 0;
  let nodes = 0;
  let depth = 0;
  for (const event of events) {
    switch (event.type) {
      case EVENT_ID.DOCUMENT:
        if (++documents > limits.maxDocuments) return false;
        break;
      case EVENT_ID.MAPPING:
      case EVENT_ID.SEQUENCE:
        // One level short of yaml's check: whatever is near the bound is judged by yaml.
        if (++depth >= limits.maxDepth) return false;
        if (event.anchorStart >= 0 || event.tagStart >= 0 || ++nodes > limits.maxNodes) return false;
        break;
      case EVENT_ID.SCALAR:
        if (event.anchorStart >= 0 || event.tagStart >= 0 || ++nodes > limits.maxNodes) return false;
        break;
      case EVENT_ID.ALIAS:
        return false;
      case EVENT_ID.POP:
        // Closes a document or a collection: only collections were counted.
        if (depth > 0) depth--;
        break;
    }
  }
  return true;
}

/** Offsets where each line starts. */
function lineStarts(text: string): number[] {
  const starts = [0];
  for (let i = text.indexOf('\n'); i >= 0; i = text.indexOf('\n', i + 1)) starts.push(i + 1);
  return starts;
}

function lineOf(starts: readonly number[], offset: number): number {
  let low = 0;
  let high = starts.length - 1;
  while (low < high) {
    const mid = (low + high + 1) >> 1;
    if ((starts[mid] as number) <= offset) low = mid;
    else high = mid - 1;
  }
  return low + 1;
}
