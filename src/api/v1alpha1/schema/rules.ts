/**
 * Cross-field rules, written once as data: the same rule becomes an `x-kubernetes-validations`
 * CEL rule in the CRD and a TypeScript check in `validateProxyObject`. A test evaluates the CEL
 * of every rule against the validation cases and fails when it disagrees with `check`.
 */
export type Node = Record<string, unknown>;

export interface CrossFieldRule<Self = Node> {
  /** Where the issue is reported, relative to the object the rule sits on ('' = the object itself, '.field' = a member). */
  path: string;
  message: string;
  /** CEL over `self` (the object the rule sits on), as the Kubernetes API server evaluates it. */
  cel: string;
  /** The same rule in TypeScript; `self` has already passed the structural schema. */
  check(self: Self): boolean;
  /** Members of a one-of / at-most-one rule, so the TypeScript message can say which were found. */
  members?: readonly string[];
}

/** The schema keyword that carries rules until the CRD generator turns them into x-kubernetes-validations. */
export const RULES_KEYWORD = 'x-switchboard-rules';

export function has(self: unknown, key: string): boolean {
  return typeof self === 'object' && self !== null && (self as Node)[key] !== undefined;
}

function count(self: Node, members: readonly string[]): number {
  return members.filter((m) => has(self, m)).length;
}

function celCount(members: readonly string[]): string {
  return members.map((m) => `(has(self.${m}) ? 1 : 0)`).join(' + ');
}

function list(members: readonly string[]): string {
  return members.join(', ');
}

export function exactlyOne(members: readonly string[]): CrossFieldRule {
  return {
    path: '',
    message: members.length === 1 ? `${members[0]} must be set` : `exactly one of ${list(members)} must be set`,
    cel: `${celCount(members)} == 1`,
    check: (self) => count(self, members) === 1,
    members,
  };
}

export function atMostOne(members: readonly string[]): CrossFieldRule {
  return {
    path: '',
    message: `at most one of ${list(members)} may be set`,
    cel: `${celCount(members)} <= 1`,
    check: (self) => count(self, members) <= 1,
    members,
  };
}

export function atLeastOne(members: readonly string[]): CrossFieldRule {
  return {
    path: '',
    message: `at least one of ${list(members)} must be set`,
    cel: `${celCount(members)} >= 1`,
    check: (self) => count(self, members) >= 1,
    members,
  };
}

/** `field` may only be set when `other` is set. */
export function onlyWith(field: string, other: string): CrossFieldRule {
  return {
    path: `.${field}`,
    message: `may only be set together with ${other}`,
    cel: `!has(self.${field}) || has(self.${other})`,
    check: (self) => !has(self, field) || has(self, other),
  };
}

/** Both or neither. */
export function together(a: string, b: string): CrossFieldRule {
  return {
    path: '',
    message: `${a} and ${b} must be set together`,
    cel: `has(self.${a}) == has(self.${b})`,
    check: (self) => has(self, a) === has(self, b),
  };
}

/**
 * A conditional list: entries are tried in order, so at most one entry may omit `condition`
 * (the fallback), and it must be the last one.
 */
export function fallbackLast(conditionField: string): CrossFieldRule<readonly Node[]> {
  // cel-js rejects has() over an indexed element, so compare the fallback with the last entry instead.
  return {
    path: '',
    message: `only one entry may omit ${conditionField} (the fallback), and it must be the last`,
    cel: `self.filter(e, !has(e.${conditionField})).size() <= 1 && self.all(e, has(e.${conditionField}) || e == self[self.size() - 1])`,
    check: (self) => {
      const fallbacks = self.filter((e) => !has(e, conditionField));
      return fallbacks.length === 0 || (fallbacks.length === 1 && !has(self[self.length - 1], conditionField));
    },
  };
}

/** Every entry's `key` is unique in the list. */
export function uniqueBy(key: string): CrossFieldRule<readonly Node[]> {
  return {
    path: '',
    message: `${key} must be unique`,
    cel: `self.all(a, self.filter(b, b.${key} == a.${key}).size() == 1)`,
    check: (self) => new Set(self.map((e) => e[key])).size === self.length,
  };
}
