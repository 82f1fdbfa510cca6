/**
 * `discoveryNamespaceSelectors` (SPEC.md chart value): which namespaces the controller reads.
 * Entries are OR-ed; inside one entry `matchLabels` and every `matchExpressions` item are AND-ed,
 * as a Kubernetes LabelSelector is. An empty list selects every namespace.
 */

export interface LabelSelectorRequirement {
  readonly key: string;
  readonly operator: 'In' | 'NotIn' | 'Exists' | 'DoesNotExist';
  readonly values?: readonly string[];
}

export interface LabelSelector {
  readonly matchLabels?: Readonly<Record<string, string>>;
  readonly matchExpressions?: readonly LabelSelectorRequirement[];
}

const OPERATORS = new Set(['In', 'NotIn', 'Exists', 'DoesNotExist']);

export function matchesSelector(labels: Readonly<Record<string, string>>, selector: LabelSelector): boolean {
  for (const [key, value] of Object.entries(selector.matchLabels ?? {})) if (labels[key] !== value) return false;
  for (const requirement of selector.matchExpressions ?? []) {
    const has = Object.hasOwn(labels, requirement.key);
    const value = labels[requirement.key];
    switch (requirement.operator) {
      case 'In': if (!has || !(requirement.values ?? []).includes(value!)) return false; break;
      case 'NotIn': if (has && (requirement.values ?? []).includes(value!)) return false; break;
      case 'Exists': if (!has) return false; break;
      case 'DoesNotExist': if (has) return false; break;
    }
  }
  return true;
}

/** True when the namespace (by its labels) is selected; an empty selector list selects all. */
export function namespaceSelected(labels: Readonly<Record<string, string>>, selectors: readonly LabelSelector[]): boolean {
  return selectors.length === 0 || selectors.some((s) => matchesSelector(labels, s));
}

/**
 * Parses the flag's JSON (`[{"matchLabels":{"team":"a"}}]`), refusing anything a LabelSelector
 * cannot be: a typo must stop the controller, not silently select every namespace.
 */
export function parseNamespaceSelectors(text: string): LabelSelector[] {
  const value: unknown = JSON.parse(text);
  if (!Array.isArray(value)) throw new Error('discoveryNamespaceSelectors must be a JSON list of label selectors');
  return value.map((entry, index) => {
    const where = `discoveryNamespaceSelectors[${index}]`;
    if (entry === null || typeof entry !== 'object' || Array.isArray(entry)) throw new Error(`${where} must be an object`);
    const { matchLabels, matchExpressions, ...rest } = entry as Record<string, unknown>;
    if (Object.keys(rest).length > 0) throw new Error(`${where}: unknown field ${Object.keys(rest)[0]!}`);
    if (matchLabels !== undefined && !isStringMap(matchLabels)) throw new Error(`${where}.matchLabels must map strings to strings`);
    if (matchExpressions !== undefined) {
      if (!Array.isArray(matchExpressions)) throw new Error(`${where}.matchExpressions must be a list`);
      matchExpressions.forEach((r: unknown, i) => {
        const req = r as Partial<LabelSelectorRequirement>;
        if (typeof req?.key !== 'string' || !OPERATORS.has(String(req.operator))) throw new Error(`${where}.matchExpressions[${i}] needs a key and an operator In, NotIn, Exists or DoesNotExist`);
        const needsValues = req.operator === 'In' || req.operator === 'NotIn';
        if (needsValues !== (Array.isArray(req.values) && req.values.length > 0)) throw new Error(`${where}.matchExpressions[${i}]: values are required for In/NotIn and not allowed otherwise`);
      });
    }
    return entry as LabelSelector;
  });
}

function isStringMap(value: unknown): value is Record<string, string> {
  return value !== null && typeof value === 'object' && !Array.isArray(value) && Object.values(value).every((v) => typeof v === 'string');
}
