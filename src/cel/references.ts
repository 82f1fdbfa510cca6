import type { ASTNode } from '@marcbachmann/cel-js';
import { children } from './cel-internals.ts';
import { VARIABLE_NAMES } from './environment.ts';

/**
 * Which variables and fields an expression reads, as dotted paths (`request.headers`,
 * `jwt.sub`, `request.body`). The proxy uses this to do expensive work only when some
 * expression needs it: buffer a body, parse a query, count tokens.
 *
 * Conservative by design: a whole variable used as a value (`toJson(request)`) is reported as
 * `request`, which covers every field under it; a dynamic index (`request.headers[name]`) stops
 * the path at `request.headers`.
 */

const ROOTS: ReadonlySet<string> = new Set(VARIABLE_NAMES);

/** The dotted path of a pure access chain rooted at an identifier, or undefined. */
function accessPath(node: ASTNode): string | undefined {
  switch (node.op) {
    case 'id':
      return node.args;
    case '.':
    case '.?': {
      const base = accessPath(node.args[0]);
      return base === undefined ? undefined : `${base}.${node.args[1]}`;
    }
    case '[]':
    case '[?]': {
      const index = node.args[1];
      if (index.op !== 'value' || typeof index.args !== 'string') return undefined;
      const base = accessPath(node.args[0]);
      return base === undefined ? undefined : `${base}.${index.args}`;
    }
    default:
      return undefined;
  }
}

function collect(node: ASTNode, out: Set<string>): void {
  const path = accessPath(node);
  if (path !== undefined) {
    const root = path.split('.', 1)[0];
    if (ROOTS.has(root)) out.add(path);
    return;
  }
  for (const child of children(node)) collect(child, out);
}

export function collectReferences(ast: ASTNode): ReadonlySet<string> {
  const out = new Set<string>();
  collect(ast, out);
  return out;
}

/** True when any reference reads `path`, a field below it, or a value containing it. */
export function referencesPath(references: ReadonlySet<string>, path: string): boolean {
  for (const r of references) {
    if (r === path || r.startsWith(`${path}.`) || path.startsWith(`${r}.`)) return true;
  }
  return false;
}
