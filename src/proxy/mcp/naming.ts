import type { McpPrefixMode } from '../../ir/mcp.ts';

/**
 * How items of several targets share one namespace. Tool and prompt names become
 * `<target>_<name>` when prefixing is on (prefixMode Always, or Conditional with several
 * targets); resource URIs and URI templates always become `<target>+<uri>` (SPEC.md: resource
 * URIs keep target routing information), which is still a URI: `+` is legal in a scheme.
 */
export const NAME_SEPARATOR = '_';
export const URI_SEPARATOR = '+';

export interface Routed {
  readonly target: string;
  /** The name or URI as the target knows it. */
  readonly value: string;
}

export class Namer {
  readonly prefixNames: boolean;
  readonly #targets: ReadonlySet<string>;
  /** Longest first, so `a_b` wins over `a` when both are targets and the name is `a_b_tool`. */
  readonly #byLength: readonly string[];

  constructor(targets: readonly string[], mode: McpPrefixMode) {
    this.#targets = new Set(targets);
    this.#byLength = [...targets].sort((a, b) => b.length - a.length);
    this.prefixNames = mode === 'Always' || (mode === 'Conditional' && targets.length > 1);
  }

  exposeName(target: string, name: string): string {
    return this.prefixNames ? `${target}${NAME_SEPARATOR}${name}` : name;
  }

  /** The target and upstream name of a prefixed name; undefined when no target prefix matches (or prefixing is off). */
  routeName(exposed: string): Routed | undefined {
    if (!this.prefixNames) return undefined;
    for (const target of this.#byLength) {
      if (exposed.length > target.length + 1 && exposed.startsWith(target) && exposed[target.length] === NAME_SEPARATOR) {
        return { target, value: exposed.slice(target.length + 1) };
      }
    }
    return undefined;
  }

  exposeUri(target: string, uri: string): string {
    return `${target}${URI_SEPARATOR}${uri}`;
  }

  routeUri(exposed: string): Routed | undefined {
    const at = exposed.indexOf(URI_SEPARATOR);
    if (at <= 0) return undefined;
    const target = exposed.slice(0, at);
    return this.#targets.has(target) && at + 1 < exposed.length ? { target, value: exposed.slice(at + 1) } : undefined;
  }
}
