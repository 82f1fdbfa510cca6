/**
 * `ai.promptGuard` in IR shape. The rest of `ai` passes through as written (the LLM handler reads
 * it), but the remote guards name things only the controller can resolve:
 *   - each guard's `policies` (tcp, tls, http, tunnel, auth) is lowered as BackendPolicy members
 *     are (Secrets resolved, durations in ms), so the proxy's backend-policy layer can use them;
 *   - a webhook's `backendRef` (a Service or ProxyBackend) is resolved by the backend resolver, as
 *     extAuth's is: `backendKey` (the backend is published with the route, with the connection
 *     members of the Service's own backend policies), which the proxy balances over the backend's
 *     ready endpoints; plus `url`, its first ready endpoint, the proxy's fallback when it has no
 *     compiled config holding the backend (docs/policies-backend.md "External services");
 *   - `forwardHeaderMatches` names are lower-cased and `type` defaults to Exact.
 */
import { RE2JS } from 're2js';
import type { BackendObjectReference } from '../../../api/gateway/index.ts';
import { isDict } from '../read.ts';
import type { LowerContext } from './lower.ts';

/** Lowers a guard's `policies` (members.ts's lowerBackend, passed in to keep the import one-way). */
export type LowerPolicies = (spec: Record<string, unknown>, path: string) => Record<string, unknown>;

const REMOTE_WITH_POLICIES = ['providerAModeration', 'cloudAGuardrails', 'cloudCShield'] as const;

export function lowerAiPolicy(value: unknown, path: string, ctx: LowerContext, lowerPolicies: LowerPolicies): unknown {
  if (!isDict(value) || !isDict(value.promptGuard)) return value;
  const guard = value.promptGuard;
  const out: Record<string, unknown> = { ...guard };
  for (const phase of ['request', 'response'] as const) {
    const list = guard[phase];
    if (!Array.isArray(list)) continue;
    out[phase] = list.map((entry: unknown, i) => (isDict(entry) ? lowerEntry(entry, `${path}.promptGuard.${phase}[${i}]`, ctx, lowerPolicies) : entry));
  }
  return { ...value, promptGuard: out };
}

function lowerEntry(entry: Record<string, unknown>, path: string, ctx: LowerContext, lowerPolicies: LowerPolicies): Record<string, unknown> {
  const out: Record<string, unknown> = { ...entry };
  for (const kind of REMOTE_WITH_POLICIES) {
    const spec = entry[kind];
    if (isDict(spec) && isDict(spec.policies)) out[kind] = { ...spec, policies: lowerPolicies(spec.policies, `${path}.${kind}.policies`) };
  }
  if (isDict(entry.webhook)) out.webhook = lowerWebhook(entry.webhook, `${path}.webhook`, ctx);
  if (isDict(entry.regex)) checkPatterns(entry.regex, `${path}.regex`, ctx);
  return out;
}

/** A `regex` guard's patterns are compiled here too, so a bad one is reported at translation (the proxy fails it closed anyway). */
function checkPatterns(spec: Record<string, unknown>, path: string, ctx: LowerContext): void {
  (Array.isArray(spec.matches) ? spec.matches : []).forEach((pattern: unknown, i) => {
    if (typeof pattern !== 'string') return;
    try {
      RE2JS.compile(pattern);
    } catch (err) {
      ctx.problems.push(`${path}.matches[${i}]: invalid RE2 pattern: ${(err as Error).message}`);
    }
  });
}

function lowerWebhook(spec: Record<string, unknown>, path: string, ctx: LowerContext): Record<string, unknown> {
  const { backendRef, ...rest } = spec;
  const out: Record<string, unknown> = { ...rest };
  if (Array.isArray(spec.forwardHeaderMatches)) {
    out.forwardHeaderMatches = spec.forwardHeaderMatches.map((m: unknown) => (isDict(m) ? { ...m, type: m.type ?? 'Exact', name: String(m.name).toLowerCase() } : m));
  }
  if (!isDict(backendRef)) {
    ctx.problems.push(`${path}.backendRef is required`);
    return out;
  }
  const resolved = ctx.resolver.resolve(backendRef as unknown as BackendObjectReference, `${path}.backendRef`);
  if (resolved.backendKey === null) {
    ctx.problems.push(resolved.problem?.message ?? `${path}.backendRef does not resolve`);
    return out;
  }
  out.backendKey = resolved.backendKey;
  const first = ctx.resolver.backends.get(resolved.backendKey)?.endpoints[0];
  // No ready endpoint: no url, and the guard's calls fail (its failureMode decides), as a down service would.
  if (first) out.url = `http://${first.host.includes(':') ? `[${first.host}]` : first.host}:${first.port}`;
  return out;
}
