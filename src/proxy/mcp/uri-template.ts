import { RE2JS } from 're2js';

/**
 * Whether a URI could be an expansion of an RFC 6570 URI template (the form MCP resource
 * templates use). Used to find the target that serves an unprefixed resource URI: a loose match
 * is enough (the target's own read decides), but it must never match across literal text.
 *
 * Expressions become patterns by operator: simple `{x}` cannot produce `/ ? #` (they are
 * percent-encoded), reserved `{+x}` and fragment `{#x}` can produce anything, and the
 * path/label/parameter/query operators produce their prefixed segments, each optional.
 * Patterns run on RE2 (linear time): templates come from upstream servers.
 */
const OPERATOR_PATTERNS: Readonly<Record<string, string>> = {
  '': '[^/?#]*',
  '+': '.*',
  '#': '(?:#.*)?',
  '/': '(?:/[^/?#]*)*',
  '.': '(?:\\.[^/?#.]*)*',
  ';': '(?:;[^/?#;]*)*',
  '?': '(?:\\?[^#]*)?',
  '&': '(?:&[^#]*)*',
};

const MAX_TEMPLATE_LENGTH = 2048;
const MAX_URI_LENGTH = 8192;
const CACHE_SIZE = 256;
const cache = new Map<string, RE2JS | null>();

function escapeLiteral(text: string): string {
  return text.replace(/[\\^$.*+?()[\]{}|]/g, '\\$&');
}

/** The compiled pattern of a template; null when the template is malformed (an unclosed brace) or too long. */
function compile(template: string): RE2JS | null {
  if (template.length > MAX_TEMPLATE_LENGTH) return null;
  let pattern = '';
  let at = 0;
  while (at < template.length) {
    const open = template.indexOf('{', at);
    if (open < 0) {
      pattern += escapeLiteral(template.slice(at));
      break;
    }
    const close = template.indexOf('}', open);
    if (close < 0) return null;
    pattern += escapeLiteral(template.slice(at, open));
    const expression = template.slice(open + 1, close);
    const operator = expression.length > 0 && Object.hasOwn(OPERATOR_PATTERNS, expression[0]) ? expression[0] : '';
    pattern += OPERATOR_PATTERNS[operator];
    at = close + 1;
  }
  try {
    return RE2JS.compile(`^${pattern}$`, RE2JS.DOTALL);
  } catch {
    return null;
  }
}

export function matchesTemplate(template: string, uri: string): boolean {
  if (uri.length > MAX_URI_LENGTH) return false;
  let re = cache.get(template);
  if (re === undefined) {
    re = compile(template);
    if (cache.size >= CACHE_SIZE) cache.delete(cache.keys().next().value as string);
    cache.set(template, re);
  }
  return re !== null && re.matches(uri);
}
