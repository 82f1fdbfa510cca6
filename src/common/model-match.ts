/**
 * Shared by the translator (which orders a configuration's models once) and the proxy (which
 * selects one per request).
 *
 * ProxyModel `match.model` (SPEC.md): an exact name, a suffix wildcard (`gpt-*`: the name starts
 * with `gpt-`), a prefix wildcard (`*-latest`: the name ends with `-latest`) or `*` (any name);
 * absent, the object's `metadata.name` exactly. When several models match a request's `model`,
 * the most specific wins: an exact name, then the wildcard with the longest literal part (a
 * `gpt-4o-*` beats a `gpt-*`), then `*`. Ties between wildcards of equal length (a `gpt-*` and a
 * `*mini` both matching `gpt-mini`) go to the prefix form (`gpt-*`: the family a name starts with
 * says more than its suffix), then to the older object (creationTimestamp, then namespace/name),
 * the Gateway API's rule for conflicting routes — so the answer never depends on list order.
 *
 * `Internal` models are never matched by a client's request (only virtual models select them).
 * Compiled once per configuration; `selectModel` does no allocation per request.
 */

export type ModelPattern =
  | { readonly kind: 'exact'; readonly name: string }
  | { readonly kind: 'startsWith'; readonly literal: string }
  | { readonly kind: 'endsWith'; readonly literal: string }
  | { readonly kind: 'any' };

export type Visibility = 'Public' | 'Internal';

export interface MatchableModel {
  /** `namespace/name` of the ProxyModel. */
  readonly id: string;
  readonly pattern: ModelPattern;
  readonly visibility: Visibility;
  /** RFC 3339 creationTimestamp, when known (older wins a tie). */
  readonly created?: string;
}

/**
 * The pattern a `match.model` string stands for, or a message when it is not one SPEC.md allows
 * (a `*` anywhere but alone, first or last, or both ends at once).
 */
export function parseModelPattern(written: string | undefined, objectName: string): ModelPattern | { readonly error: string } {
  const text = written ?? objectName;
  if (text.length === 0) return { error: 'match.model must not be empty' };
  if (text === '*') return { kind: 'any' };
  const stars = text.split('*').length - 1;
  if (stars === 0) return { kind: 'exact', name: text };
  if (stars === 1 && text.endsWith('*')) return { kind: 'startsWith', literal: text.slice(0, -1) };
  if (stars === 1 && text.startsWith('*')) return { kind: 'endsWith', literal: text.slice(1) };
  return { error: `match.model "${text}": a wildcard is "*" alone, a suffix wildcard ("gpt-*") or a prefix wildcard ("*-latest")` };
}

export function patternMatches(pattern: ModelPattern, model: string): boolean {
  switch (pattern.kind) {
    case 'exact': return model === pattern.name;
    case 'startsWith': return model.startsWith(pattern.literal);
    case 'endsWith': return model.endsWith(pattern.literal);
    case 'any': return true;
  }
}

/** Higher is more specific. Exact beats every wildcard; `*` loses to every other pattern. */
function specificity(pattern: ModelPattern): number {
  switch (pattern.kind) {
    // Model names are at most 1024 characters (LongString), so 4 * 1024 + 3 is above any wildcard.
    case 'exact': return Number.MAX_SAFE_INTEGER;
    case 'startsWith': return pattern.literal.length * 4 + 2;
    case 'endsWith': return pattern.literal.length * 4 + 1;
    case 'any': return 0;
  }
}

function olderFirst(a: MatchableModel, b: MatchableModel): number {
  const byTime = (a.created ?? '').localeCompare(b.created ?? '');
  if (byTime !== 0 && a.created && b.created) return byTime;
  return a.id.localeCompare(b.id);
}

/**
 * The order to try models in for one request: most specific first (see the file comment). Run
 * once per configuration; `selectModel` then takes the first that matches.
 */
export function orderBySpecificity<M extends MatchableModel>(models: readonly M[], tierOf?: (model: M) => number): M[] {
  // `tierOf`: at equal specificity, the lower tier first (a ProxyModel attached to the rule itself before one attached through its Gateway).
  return [...models].sort((a, b) => specificity(b.pattern) - specificity(a.pattern) || (tierOf ? tierOf(a) - tierOf(b) : 0) || olderFirst(a, b));
}

/**
 * The model a client's `model` selects among `ordered` (from orderBySpecificity), or undefined.
 * `internal: true` lets virtual models select Internal models too.
 */
export function selectModel<M extends MatchableModel>(ordered: readonly M[], model: string, opts: { readonly internal?: boolean } = {}): M | undefined {
  for (const candidate of ordered) {
    if (candidate.visibility === 'Internal' && !opts.internal) continue;
    if (patternMatches(candidate.pattern, model)) return candidate;
  }
  return undefined;
}
