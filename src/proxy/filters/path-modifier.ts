import type { PathModifier } from '../../ir/types.ts';
import type { PathMatcher } from '../routing/matchers.ts';
import { trimTrailingSlashes } from '../routing/matchers.ts';

/**
 * The new path for a URLRewrite or RequestRedirect path modifier. ReplacePrefixMatch follows the
 * Gateway API's segment rules: with prefix `/foo`, `/foo/bar` → `<value>/bar`; a replacement of
 * `/` or '' yields `/bar`; `/foo` alone becomes the replacement (or `/`). It only applies to a
 * PathPrefix match; on other match types the path is left as it is.
 */
export function modifyPath(path: string, modifier: PathModifier, matched: PathMatcher): string {
  if (modifier.type === 'ReplaceFullPath') return modifier.value;
  if (matched.type !== 'PathPrefix') return path;
  const rest = path.slice(matched.prefix.length);
  const replaced = trimTrailingSlashes(modifier.value) + rest;
  return replaced === '' ? '/' : replaced;
}
