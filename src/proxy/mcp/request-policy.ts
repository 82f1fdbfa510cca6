/**
 * The MCP authorization and guardrails one request runs under. The translator wrote them into the
 * route's backend policy: `mcp` for the backend as a whole and `subBackends[<target>].mcp` for a
 * target a policy names by sectionName (complete, not a difference). Nothing is merged here; this
 * picks per item or message which of those applies and keeps the compiled forms:
 *
 *   - authorization: per item, the rules of the item's target (its sub-backend policy when it has
 *     one, else the backend's);
 *   - guardrails: per message, those of the target it is routed to, or the backend's for fan-out
 *     methods (lists, broadcasts).
 *
 * A request without a backend policy (a handler driven outside a gateway route) uses the
 * backend IR's own `authorization`/`guardrails` (its inline `policies.mcp`).
 */
import type { Logger } from '../../common/logger.ts';
import type { CelInput } from '../../cel/index.ts';
import type { McpAuthorizationRule, McpBackendIR, McpGuardrailIR, McpPolicyIR } from '../../ir/mcp.ts';
import type { BackendPolicy } from '../../ir/policy.ts';
import { McpAuthorizer, type McpItem } from './authorization.ts';
import type * as GuardrailsModule from './guardrails/guardrails.ts';
import type { Guardrails } from './guardrails/guardrails.ts';
import { lazyModule } from '../../common/lazy-module.ts';

// The guardrail client (gRPC): loaded when a config first names an MCP guardrail (lazy-module.ts).
const guardrailsModule = lazyModule<typeof GuardrailsModule>(import.meta.url, './guardrails/guardrails.ts');

/** What the multiplexer and list merging ask of authorization. */
export interface ItemAuthorizer {
  allows(item: McpItem, method: string, context: CelInput | undefined): boolean;
}

export interface McpRequestPolicy {
  readonly authorizer: ItemAuthorizer;
  /** Guardrails for a message routed to `target` ('' for fan-out); undefined when none apply. */
  guardrailsFor(target: string): Guardrails | undefined;
}

/** Per-target authorizers over the backend-wide one. */
class TargetedAuthorizer implements ItemAuthorizer {
  readonly #base: McpAuthorizer;
  readonly #byTarget: ReadonlyMap<string, McpAuthorizer>;

  constructor(base: McpAuthorizer, byTarget: ReadonlyMap<string, McpAuthorizer>) {
    this.#base = base;
    this.#byTarget = byTarget;
  }

  allows(item: McpItem, method: string, context: CelInput | undefined): boolean {
    return (this.#byTarget.get(item.target) ?? this.#base).allows(item, method, context);
  }
}

/**
 * The request policies of one MCP backend, compiled once per route backend policy object (the IR
 * is immutable, so identity is a safe key). Guardrail clients are shared by equal processor
 * lists and closed with the handler.
 */
export class McpRequestPolicies {
  readonly #logger: Logger;
  readonly #own: McpRequestPolicy;
  readonly #byRoute = new WeakMap<BackendPolicy, McpRequestPolicy>();
  readonly #guardrails = new Map<string, Guardrails>();

  constructor(backend: McpBackendIR, logger: Logger) {
    this.#logger = logger;
    this.#own = this.#compile({ ...(backend.authorization ? { authorization: backend.authorization } : {}), ...(backend.guardrails ? { guardrails: backend.guardrails } : {}) }, new Map());
  }

  for(route: BackendPolicy | undefined): McpRequestPolicy {
    if (route === undefined) return this.#own;
    let policy = this.#byRoute.get(route);
    if (!policy) {
      const subs = new Map(Object.entries(route.subBackends ?? {}).map(([target, sub]) => [target, sub.mcp ?? {}] as const));
      this.#byRoute.set(route, (policy = this.#compile(route.mcp ?? {}, subs)));
    }
    return policy;
  }

  close(): void {
    for (const guardrails of this.#guardrails.values()) guardrails.close();
    this.#guardrails.clear();
  }

  #compile(backend: McpPolicyIR, targets: ReadonlyMap<string, McpPolicyIR>): McpRequestPolicy {
    const authorizers = new Map<readonly McpAuthorizationRule[] | undefined, McpAuthorizer>();
    const authorizer = (rules: readonly McpAuthorizationRule[] | undefined): McpAuthorizer => {
      let found = authorizers.get(rules);
      if (!found) authorizers.set(rules, (found = new McpAuthorizer(rules, this.#logger)));
      return found;
    };
    const base = authorizer(backend.authorization);
    const byTarget = new Map([...targets].map(([target, mcp]) => [target, authorizer(mcp.authorization)] as const));
    const baseGuardrails = this.#guardrailsOf(backend.guardrails);
    const targetGuardrails = new Map([...targets].map(([target, mcp]) => [target, this.#guardrailsOf(mcp.guardrails)] as const));
    return {
      authorizer: byTarget.size === 0 ? base : new TargetedAuthorizer(base, byTarget),
      guardrailsFor: (target) => (targetGuardrails.has(target) ? targetGuardrails.get(target) : baseGuardrails),
    };
  }

  #guardrailsOf(processors: readonly McpGuardrailIR[] | undefined): Guardrails | undefined {
    if (!processors || processors.length === 0) return undefined;
    const key = JSON.stringify(processors);
    let guardrails = this.#guardrails.get(key);
    if (!guardrails) this.#guardrails.set(key, (guardrails = new (guardrailsModule().Guardrails)(processors, this.#logger)));
    return guardrails;
  }
}
