import type { Logger } from '../../common/logger.ts';
import { authorize, compile, createActivation, type AuthorizationRule, type CelInput, type McpInput } from '../../cel/index.ts';
import type { McpAuthorizationRule } from '../../ir/mcp.ts';
import type { ItemKind } from './methods.ts';

/**
 * MCP-level authorization (SPEC.md BackendMCP `authorization`): list results are filtered item
 * by item, and a call/get/read of an item is rejected exactly as if the item did not exist.
 * The expressions see the request's CEL context plus `mcp.method`, `mcp.target` and
 * `mcp.tool|prompt|resource` = `{ name, target }` with the upstream (unprefixed) name; for a
 * resource the name is its URI (the URI template for template listings).
 */
export interface McpItem {
  readonly kind: ItemKind;
  readonly target: string;
  readonly name: string;
}

export class McpAuthorizer {
  readonly #rules: readonly AuthorizationRule[];
  /** An expression failed to compile: fail closed, nothing is visible or callable. */
  readonly #broken: boolean;

  constructor(rules: readonly McpAuthorizationRule[] | undefined, logger: Logger) {
    const compiled: AuthorizationRule[] = [];
    let broken = false;
    for (const rule of rules ?? []) {
      const programs = [];
      for (const expression of rule.matchExpressions) {
        const result = compile(expression, { expect: ['bool'] });
        if (!result.ok) {
          logger.error({ expression, error: result.error.message }, 'MCP authorization expression does not compile; denying every MCP item');
          broken = true;
          continue;
        }
        programs.push(result.program);
      }
      compiled.push({ action: rule.action, matchExpressions: programs });
    }
    this.#rules = compiled;
    this.#broken = broken;
  }

  get enabled(): boolean {
    return this.#broken || this.#rules.length > 0;
  }

  allows(item: McpItem, method: string, context: CelInput | undefined): boolean {
    if (this.#broken) return false;
    if (this.#rules.length === 0) return true;
    const mcp: McpInput = { method, target: item.target, [item.kind]: { name: item.name, target: item.target } };
    return authorize(this.#rules, createActivation({ ...context, mcp })).allowed;
  }
}
