import type { LabelSelector, LabelSelectorRequirement } from '../../api/gateway/index.ts';
import { isDict, listOf, stringRecord } from './read.ts';

/**
 * Kubernetes label selector semantics: every matchLabels pair and every matchExpressions
 * requirement must hold; an empty selector matches everything. An unknown operator matches
 * nothing, so a typo never widens access.
 */
export function selectorMatches(selector: LabelSelector | undefined, labels: Readonly<Record<string, string>>): boolean {
  if (!isDict(selector)) return true;
  for (const [key, value] of Object.entries(stringRecord(selector.matchLabels))) if (labels[key] !== value) return false;
  return listOf<LabelSelectorRequirement>(selector.matchExpressions).every((req) => requirementHolds(req, labels));
}

function requirementHolds(req: LabelSelectorRequirement, labels: Readonly<Record<string, string>>): boolean {
  const values = Array.isArray(req.values) ? req.values : [];
  const has = Object.hasOwn(labels, req.key);
  switch (req.operator) {
    case 'In': return has && values.includes(labels[req.key]);
    case 'NotIn': return !has || !values.includes(labels[req.key]);
    case 'Exists': return has;
    case 'DoesNotExist': return !has;
    default: return false;
  }
}
