import { ProxyPolicySpec } from '../../../api/v1alpha1/policy/proxy-policy.ts';
import { ProxyBackendSpec } from '../../../api/v1alpha1/backend/proxy-backend.ts';
import {
  BACKEND_MEMBERS, FRONTEND_MEMBERS, TRAFFIC_MEMBERS,
  type AuthorizationAction, type AuthorizationRule, type BackendMember, type BackendPolicy, type FrontendMember, type FrontendPolicy,
  type JwtAuthenticationPolicy, type PolicySource, type TrafficMember, type TrafficPolicy,
} from '../../../ir/policy.ts';
import { isDict } from '../read.ts';
import { resolveBackendAuth, resolveBackendTls } from './backend-members.ts';
import { resolveApiKeyAuthentication, resolveBasicAuthentication, type SelectableConfig } from './client-auth.ts';
import { lower, type LowerContext } from './lower.ts';
import { lowerMcpPolicy } from './mcp-member.ts';
import { lowerAiPolicy } from './prompt-guard.ts';
import type { AiPolicy } from '../../../ir/ai.ts';
import type { McpPolicyIR } from '../../../ir/mcp.ts';

type SchemaNode = { properties?: Record<string, unknown> };
const memberSchemas = (schema: unknown): Record<string, unknown> => (schema as SchemaNode).properties ?? {};
const POLICY = memberSchemas(ProxyPolicySpec);
const TRAFFIC = memberSchemas(POLICY.traffic);
const FRONTEND = memberSchemas(POLICY.frontend);
const BACKEND = memberSchemas(POLICY.backend);
const INLINE_BACKEND = memberSchemas(memberSchemas(ProxyBackendSpec).policies);

/** A policy section in IR shape: member name → value. Authorization holds its rules only. */
export type Members<M extends string> = Partial<Record<M, unknown>>;

/**
 * The IR type of each member as lowered here (the effective policy's member type; authorization
 * members hold their rules, which merging accumulates into `{ rules }`).
 */
type LoweredMembers<P, M extends keyof P, A extends string = never> = { -readonly [K in Exclude<M, A>]?: P[K] } & { -readonly [K in A]?: AuthorizationRule[] };
export type TrafficMembers = LoweredMembers<TrafficPolicy, TrafficMember, 'authorization'>;
export type FrontendMembers = LoweredMembers<FrontendPolicy, FrontendMember, 'networkAuthorization'>;
export type BackendMembers = LoweredMembers<BackendPolicy, BackendMember>;

/**
 * `lower()` walks the member's API schema; src/ir/lowered.ts is the same walk at the type level
 * (src/ir/members.ts applies it to each member's API type). This is the one place the runtime
 * walk's result is given that type; test/golden and src/ir/validate.test.ts check the output.
 */
function lowerAs<T>(schema: unknown, value: unknown, path: string, ctx: LowerContext): T {
  return lower(schema, value, path, ctx) as T;
}

/** Sets one member whose name is only known as a union (the generic keeps name and value paired). */
function put<T, K extends keyof T>(out: T, key: K, value: T[K]): void {
  out[key] = value;
}

export const AUTHORIZATION_MEMBERS: ReadonlySet<string> = new Set(['authorization', 'networkAuthorization']);

function authorizationRules(spec: unknown, source: PolicySource): AuthorizationRule[] {
  if (!isDict(spec) || !isDict(spec.policy) || !Array.isArray(spec.policy.matchExpressions)) return [];
  const action = (typeof spec.action === 'string' ? spec.action : 'Allow') as AuthorizationAction;
  return [{ matchExpressions: spec.policy.matchExpressions.filter((e): e is string => typeof e === 'string'), action, source }];
}

/** Traffic members in IR shape (phase and strategy are read by the caller, not members). */
export function lowerTraffic(spec: Record<string, unknown>, source: PolicySource, ctx: LowerContext, selectable: SelectableConfig): TrafficMembers {
  const out: TrafficMembers = {};
  for (const member of TRAFFIC_MEMBERS) {
    const value = spec[member];
    if (value === undefined) continue;
    const path = `spec.traffic.${member}`;
    if (!isDict(value)) continue;
    switch (member) {
      case 'authorization':
        lower(TRAFFIC[member], value, path, ctx);
        out.authorization = authorizationRules(value, source);
        break;
      case 'apiKeyAuthentication':
      case 'basicAuthentication':
        // Only the location can hold CEL; the Secrets are read by the resolvers below.
        lower(TRAFFIC[member], { location: value.location }, path, ctx);
        if (member === 'apiKeyAuthentication') out.apiKeyAuthentication = resolveApiKeyAuthentication(value, path, ctx, selectable);
        else out.basicAuthentication = resolveBasicAuthentication(value, path, ctx);
        break;
      case 'jwtAuthentication':
        out.jwtAuthentication = lowerJwtAuthentication(value, path, ctx);
        break;
      default:
        put(out, member, lowerAs<TrafficMembers[typeof member]>(TRAFFIC[member], value, path, ctx));
    }
  }
  return out;
}

const DEFAULT_JWKS_CACHE_MS = 5 * 60_000;

/** A traffic `jwtAuthentication` in IR shape (Secrets resolved, durations in ms, defaults applied). */
export function lowerJwtAuthentication(value: Record<string, unknown>, path: string, ctx: LowerContext): JwtAuthenticationPolicy {
  return withJwtDefaults(lower(TRAFFIC.jwtAuthentication, value, path, ctx)) as JwtAuthenticationPolicy;
}

/**
 * The deprecated ProxyBackend `spec.policies.mcp.authentication` (MCPAuthentication) as the
 * traffic `jwtAuthentication` it stands for: one provider (issuer, audiences, remote jwks), the
 * mode, and the MCP OAuth fields under `mcp`. Lowered like a written one; problems (a missing
 * issuer, Secret …) are collected in `ctx.problems` with `path`.
 */
export function lowerMcpAuthentication(auth: Record<string, unknown>, path: string, ctx: LowerContext): JwtAuthenticationPolicy {
  if (typeof auth.issuer !== 'string' || auth.issuer === '') ctx.problems.push(`${path}.issuer is required (it names the accepted tokens' iss)`);
  const mcp: Record<string, unknown> = {};
  for (const key of ['resourceMetadata', 'provider', 'clientId', 'clientSecretRef']) if (auth[key] !== undefined) mcp[key] = auth[key];
  const provider = { issuer: auth.issuer, ...(auth.audiences !== undefined ? { audiences: auth.audiences } : {}), jwks: { remote: auth.jwks } };
  return lowerJwtAuthentication({ ...(auth.mode !== undefined ? { mode: auth.mode } : {}), providers: [provider], mcp }, path, ctx);
}

function withJwtDefaults(value: unknown): unknown {
  if (!isDict(value)) return value;
  const providers = Array.isArray(value.providers)
    ? value.providers.map((p: unknown) => {
        if (!isDict(p) || !isDict(p.jwks) || !isDict(p.jwks.remote)) return p;
        return { ...p, jwks: { remote: { cacheDurationMs: DEFAULT_JWKS_CACHE_MS, ...p.jwks.remote } } };
      })
    : value.providers;
  return { mode: 'Strict', ...value, providers };
}

/**
 * Backend members in IR shape; `ai` passes through as written (its handler reads it), `mcp` is
 * lowered to McpPolicyIR. Its deprecated `authentication` is only read from a ProxyBackend's inline
 * policies (as a traffic jwtAuthentication); written in a ProxyPolicy it is refused, so a token
 * check the user asked for is never silently skipped.
 */
export function lowerBackend(spec: Record<string, unknown>, path: string, ctx: LowerContext, inline: boolean): BackendMembers {
  const schemas = inline ? INLINE_BACKEND : BACKEND;
  const out: BackendMembers = {};
  for (const member of BACKEND_MEMBERS) {
    const value = spec[member];
    if (value === undefined) continue;
    const at = `${path}.${member}`;
    // As written (the schema already matched SPEC.md BackendAI), but for the prompt guards' policies and webhook backends (prompt-guard.ts).
    if (member === 'ai') out.ai = lowerAiPolicy(value, at, ctx, (policies, p) => lowerBackend(policies, p, ctx, false) as Record<string, unknown>) as AiPolicy;
    else if (member === 'mcp' && isDict(value)) {
      // Only the deprecated authentication (handled as traffic): no member, so a policy object's mcp still applies.
      const mcp = lowerMcp(value, at, ctx, inline);
      if (Object.keys(mcp).length > 0) out.mcp = mcp;
    }
    else if (member === 'tls' && isDict(value)) out.tls = resolveBackendTls(schemas.tls, value, at, ctx);
    else if (member === 'auth' && isDict(value)) out.auth = resolveBackendAuth(schemas.auth, value, at, ctx);
    else put(out, member, lowerAs<BackendMembers[typeof member]>(schemas[member], value, at, ctx));
  }
  return out;
}

function lowerMcp(value: Record<string, unknown>, path: string, ctx: LowerContext, inline: boolean): McpPolicyIR {
  if (!inline && value.authentication !== undefined) ctx.problems.push(`${path}.authentication: not supported in a ProxyPolicy (deprecated); use traffic.jwtAuthentication with mcp`);
  return lowerMcpPolicy(value, path, { namespace: ctx.namespace, snapshot: ctx.snapshot, resolver: ctx.resolver }, (p) => ctx.problems.push(p.message));
}

const PROXY_PROTOCOL_DEFAULTS = { version: 'V2', mode: 'Strict' } as const;

export function lowerFrontend(spec: Record<string, unknown>, source: PolicySource, ctx: LowerContext): FrontendMembers {
  const out: FrontendMembers = {};
  for (const member of FRONTEND_MEMBERS) {
    const value = spec[member];
    if (value === undefined) continue;
    const path = `spec.frontend.${member}`;
    if (member === 'networkAuthorization') {
      lower(FRONTEND[member], value, path, ctx); // checks the CEL; the rules are read as written
      out.networkAuthorization = authorizationRules(value, source);
    } else if (member === 'proxyProtocol') {
      const lowered = lowerAs<FrontendMembers['proxyProtocol']>(FRONTEND[member], value, path, ctx);
      if (isDict(lowered)) out.proxyProtocol = { ...PROXY_PROTOCOL_DEFAULTS, ...lowered };
    } else {
      put(out, member, lowerAs<FrontendMembers[typeof member]>(FRONTEND[member], value, path, ctx));
    }
  }
  return out;
}
