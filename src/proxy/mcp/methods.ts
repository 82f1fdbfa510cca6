/**
 * JSON-RPC method patterns (the syntax of SPEC.md's MCP guardrail `methods` maps): an exact
 * method, a prefix wildcard `tools/*`, a suffix wildcard `*\/list`, or `*`. The most specific
 * pattern wins: exact, then the wildcard with the longest literal part, then `*`. The gateway's
 * own routing table below uses the same syntax, so the two can never disagree on a method.
 */

/** Specificity of `pattern` for `method`: -1 when it does not match; higher is more specific. */
export function patternScore(pattern: string, method: string): number {
  if (pattern === method) return Number.MAX_SAFE_INTEGER;
  if (pattern === '*') return 0;
  if (pattern.endsWith('*') && !pattern.startsWith('*')) {
    const prefix = pattern.slice(0, -1);
    return method.startsWith(prefix) ? 1 + prefix.length : -1;
  }
  if (pattern.startsWith('*') && !pattern.endsWith('*')) {
    const suffix = pattern.slice(1);
    return method.endsWith(suffix) ? 1 + suffix.length : -1;
  }
  return -1;
}

/** The most specific matching pattern; ties go to the earlier pattern. */
export function mostSpecificPattern(patterns: Iterable<string>, method: string): string | undefined {
  let best: string | undefined;
  let bestScore = -1;
  for (const pattern of patterns) {
    const score = patternScore(pattern, method);
    if (score > bestScore) {
      best = pattern;
      bestScore = score;
    }
  }
  return best;
}

/** Everything an MCP item list holds, by list method. */
export const LIST_METHODS = {
  'tools/list': { resultKey: 'tools', item: 'tool' },
  'prompts/list': { resultKey: 'prompts', item: 'prompt' },
  'resources/list': { resultKey: 'resources', item: 'resource' },
  'resources/templates/list': { resultKey: 'resourceTemplates', item: 'resource' },
} as const;
export type ListMethod = keyof typeof LIST_METHODS;
export type ItemKind = 'tool' | 'prompt' | 'resource';

export function isListMethod(method: string): method is ListMethod {
  return Object.hasOwn(LIST_METHODS, method);
}

/** What the gateway does with a client message of a method. */
export type Handling =
  | 'initialize' // fan out, merge, issue the session
  | 'local' // answered by the gateway itself (ping)
  | 'list' // fan out, merge pages, prefix, filter by authorization
  | 'byName' // route by params.name (tools/call, prompts/get)
  | 'byUri' // route by params.uri (resources/read, subscribe, unsubscribe)
  | 'byRef' // route by params.ref (completion/complete)
  | 'broadcast' // every target; requests answer {} once all have answered
  | 'swallow' // handled by the gateway already (notifications/initialized)
  | 'cancel' // to the target running the cancelled request
  | 'single'; // unknown method: forwarded only when one target is joined

const ROUTING: Readonly<Record<string, Handling>> = {
  initialize: 'initialize',
  ping: 'local',
  '*/list': 'list',
  'tools/call': 'byName',
  'prompts/get': 'byName',
  'resources/read': 'byUri',
  'resources/subscribe': 'byUri',
  'resources/unsubscribe': 'byUri',
  'completion/complete': 'byRef',
  'logging/setLevel': 'broadcast',
  'notifications/initialized': 'swallow',
  'notifications/cancelled': 'cancel',
  'notifications/*': 'broadcast',
  '*': 'single',
};
const ROUTING_PATTERNS = Object.keys(ROUTING);

export function handlingOf(method: string): Handling {
  const handling = ROUTING[mostSpecificPattern(ROUTING_PATTERNS, method) ?? '*'];
  // `*/list` also matches list methods we know nothing about (e.g. tasks/list): those are not mergeable.
  return handling === 'list' && !isListMethod(method) ? 'single' : handling;
}

/** The item kind a routed call is about. */
export function itemKindOf(method: string): ItemKind | undefined {
  if (method === 'tools/call') return 'tool';
  if (method === 'prompts/get') return 'prompt';
  if (method.startsWith('resources/')) return 'resource';
  return undefined;
}
