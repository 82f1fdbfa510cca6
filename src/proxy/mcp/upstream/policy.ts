/**
 * Backend policies of MCP targets: the effective policy per target (the route's backend policy <
 * policies whose targetRefs sectionName names the target < the target's inline `policies`), and
 * what it means for talking to the target — credentials written into every upstream request,
 * connection settings (TLS, HTTP version, tcp, tunnel) and the response deadline. Compiled once
 * per target and effective policy object; the shared helpers of src/proxy/backend-policies do
 * the work. A mechanism they cannot apply here makes the target fail (its calls fail as an
 * unavailable target would: FailClosed/FailOpen decide), never an unauthenticated request.
 */
import type { BackendAuthPolicy, BackendPolicy, CredentialLocation } from '../../../ir/policy.ts';
import type { McpTargetIR } from '../../../ir/mcp.ts';
import type { PolicyContext, RequestIdentity } from '../../policies/context.ts';
import { applyBackendCredentials, writeCredential } from '../../backend-policies/auth.ts';
import { connectionSettings, type ConnectionSettings } from '../../backend-policies/connection.ts';
import { compileTokenMechanism } from '../../backend-policies/token-auth.ts';

export type UpstreamHeaders = Record<string, string | string[]>;

/** What one request routed to the MCP backend brings for its upstream requests. */
export interface UpstreamContext {
  /** The route's effective backend policy (`HandlerRequest.backendPolicy`), with `subBackends` per target. */
  readonly backendPolicy?: BackendPolicy;
  /** The request's policy context: the client token for `passthrough`, the subject for token exchange. */
  readonly policy?: PolicyContext;
}

export const NO_UPSTREAM_CONTEXT: UpstreamContext = Object.freeze({});

/** The effective policy of a target compiled for use. */
export interface TargetAccess {
  /** Set when the target cannot be reached under this policy; every call to it fails with this reason. */
  readonly failure: string | undefined;
  /** TLS/HTTP version/tcp/tunnel; undefined: plain connections with the gateway's defaults. */
  readonly settings: ConnectionSettings | undefined;
  /** `http.requestTimeout`: how long the target may take to start answering. */
  readonly timeoutMs: number | undefined;
  /** Writes the credentials into one upstream request (a promise only for signed or exchanged tokens). */
  prepare(headers: UpstreamHeaders, path: string, policy: PolicyContext | undefined): Prepared | Promise<Prepared>;
}

export interface Prepared {
  readonly headers: UpstreamHeaders;
  readonly path: string;
}

const NO_IDENTITY: RequestIdentity = Object.freeze({});
/** Backend auth mechanisms no shared helper can apply outside the LLM handler. */
const UNSUPPORTED_AUTH = ['cloudA', 'cloudB', 'cloudC'] as const;

/**
 * Merged policies per target and route policy: both are config objects, so each merge is done
 * once. Weak on both sides: a handler outlives config swaps, its old route policies must not stay.
 */
const merged = new WeakMap<McpTargetIR, { plain?: { value: BackendPolicy | undefined }; byRoute: WeakMap<BackendPolicy, BackendPolicy> }>();

/** Per top-level member: the route's backend policy < `subBackends[<target>]` < the target's inline `policies`. */
export function effectiveTargetPolicy(backend: BackendPolicy | undefined, target: McpTargetIR): BackendPolicy | undefined {
  let cache = merged.get(target);
  if (cache === undefined) merged.set(target, (cache = { byRoute: new WeakMap() }));
  if (backend === undefined) return (cache.plain ??= { value: merge(undefined, target) }).value;
  let result = cache.byRoute.get(backend);
  if (result === undefined) cache.byRoute.set(backend, (result = merge(backend, target) as BackendPolicy));
  return result;
}

function merge(backend: BackendPolicy | undefined, target: McpTargetIR): BackendPolicy | undefined {
  const targeted = backend?.subBackends?.[target.name] ?? (target.section !== undefined ? backend?.subBackends?.[target.section] : undefined);
  const inline = target.policies;
  if (!backend && !targeted && !inline) return undefined;
  const invalid = invalidOf(backend, targeted, inline);
  return {
    ...withoutSubBackends(backend), ...withoutSubBackends(targeted), ...inline,
    sources: { ...backend?.sources, ...targeted?.sources, ...inline?.sources },
    ...(invalid.length > 0 ? { invalid } : {}),
  };
}

function withoutSubBackends(policy: BackendPolicy | undefined): Omit<BackendPolicy, 'subBackends'> | undefined {
  if (!policy?.subBackends) return policy;
  const { subBackends: _ignored, ...rest } = policy;
  return rest;
}

/** A targeted policy already holds the route's (it is the merge with the sectionName level): its `invalid` list wins when present. */
function invalidOf(...policies: (BackendPolicy | undefined)[]): NonNullable<BackendPolicy['invalid']> {
  const seen = new Map<string, NonNullable<BackendPolicy['invalid']>[number]>();
  for (const p of policies) for (const i of p?.invalid ?? []) seen.set(`${i.source}\u0000${i.message}`, i);
  return [...seen.values()];
}

/** Compiles a target's effective policy; never throws (a problem becomes `failure`). */
export function compileTargetAccess(policy: BackendPolicy | undefined): TargetAccess {
  if (!policy) return PLAIN;
  const problems: string[] = [];
  for (const invalid of policy.invalid ?? []) problems.push(`${invalid.source}: ${invalid.message}`);
  const auth = policy.auth;
  for (const kind of UNSUPPORTED_AUTH) if (auth?.[kind] !== undefined) problems.push(`backend auth ${kind} is not supported for MCP targets`);
  if (auth) {
    const bad = unwritable(auth);
    if (bad) problems.push(bad);
  }
  let settings: ConnectionSettings | undefined;
  try {
    settings = connectionSettings(policy);
  } catch (error) {
    problems.push((error as Error).message);
  }
  let prepare: TargetAccess['prepare'] = (headers, path) => ({ headers, path });
  try {
    if (auth) prepare = credentialWriter(auth);
  } catch (error) {
    problems.push((error as Error).message);
  }
  const timeout = policy.http?.requestTimeoutMs;
  return {
    failure: problems.length > 0 ? `backend policy cannot be applied: ${problems.join('; ')}` : undefined,
    settings,
    timeoutMs: timeout !== undefined && timeout > 0 ? timeout : undefined,
    prepare,
  };
}

const PLAIN: TargetAccess = Object.freeze({ failure: undefined, settings: undefined, timeoutMs: undefined, prepare: (headers: UpstreamHeaders, path: string) => ({ headers, path }) });

function credentialWriter(auth: BackendAuthPolicy): TargetAccess['prepare'] {
  const identityOf = (ctx: PolicyContext | undefined) => ctx?.identity ?? NO_IDENTITY;
  const mechanism = compileTokenMechanism(auth);
  if (mechanism) {
    return async (headers, path, ctx) => {
      const token = await mechanism.token(ctx);
      const out = applyBackendCredentials(headers, path, auth, identityOf(ctx));
      return writeCredential(out.headers, out.path, mechanism.location, token);
    };
  }
  return (headers, path, ctx) => applyBackendCredentials(headers, path, auth, identityOf(ctx));
}

function unwritable(auth: BackendAuthPolicy): string | undefined {
  const writable = (l: CredentialLocation | undefined) => !l || l.header !== undefined || l.queryParameter !== undefined || l.cookie !== undefined;
  if (!writable(auth.location)) return 'auth.location must be a header, query parameter or cookie';
  if (!(auth.credentials ?? []).every((c) => writable(c.location))) return 'auth.credentials[].location must be a header, query parameter or cookie';
  return undefined;
}
