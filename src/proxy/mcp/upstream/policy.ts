/**
 * Backend policies of MCP targets: the effective policy per target (looked up: the translator
 * merged it), and what it means for talking to the target — credentials written into every
 * upstream request, connection settings (TLS, HTTP version, tcp, tunnel) and the response
 * deadline. Compiled once per target and effective policy object; the shared helpers of src/proxy/policies/backend do
 * the work. A mechanism they cannot apply here makes the target fail (its calls fail as an
 * unavailable target would: FailClosed/FailOpen decide), never an unauthenticated request.
 */
import type { BackendAuthPolicy, BackendPolicy, CredentialLocation } from '../../../ir/policy.ts';
import type { McpTargetIR } from '../../../ir/mcp.ts';
import type { McpRequestPolicy } from '../request-policy.ts';
import type { PolicyContext, RequestIdentity } from '../../policies/context.ts';
import { applyBackendCredentials, writeCredential } from '../../policies/backend/auth.ts';
import { connectionSettings, type ConnectionSettings } from '../../policies/backend/connection.ts';
import type { HeaderChanges } from '../../policies/backend/policy-headers.ts';
import type { TargetGates } from './target-gate.ts';
import { subBackendPolicy } from '../../policies/backend/sub-backend.ts';
import { unsupportedMembers } from '../../policies/backend/support.ts';
import { compileTokenMechanism } from '../../policies/backend/token-auth.ts';
import { compileCloudCredentials, type UpstreamCall } from '../../policies/backend/cloud-auth.ts';
import { usesCloudCredentials } from '../../policies/credentials/backend-credentials.ts';
import { compile, type Program } from '../../../cel/index.ts';

export type UpstreamHeaders = Record<string, string | string[]>;

/** What one request routed to the MCP backend brings for its upstream requests. */
export interface UpstreamContext {
  /** The route's effective backend policy (`HandlerRequest.backendPolicy`), with `subBackends` per target. */
  readonly backendPolicy?: BackendPolicy;
  /** The request's policy context: the client token for `passthrough`, the subject for token exchange. */
  readonly policy?: PolicyContext;
  /** The request's MCP authorization and guardrails (from the backend policy's `mcp`); absent: the backend's own. */
  readonly mcp?: McpRequestPolicy;
  /** Headers route filters and policies added, changed or removed on this request: sent on its target calls. */
  readonly headers?: HeaderChanges;
  /** Targets' own request steps (extAuth, transformation), run per call to each target; absent: no target has any. */
  readonly gates?: TargetGates;
  /** The Gateway the request came through (`<namespace>/<name>`): its session key seals the session (sessions.ts). */
  readonly gateway?: string;
}

export const NO_UPSTREAM_CONTEXT: UpstreamContext = Object.freeze({});

/** The effective policy of a target compiled for use. */
export interface TargetAccess {
  /** Set when the target cannot be reached under this policy; every call to it fails with this reason. */
  readonly failure: string | undefined;
  /** TLS/HTTP version/tcp/tunnel; undefined: plain connections with the gateway's defaults. */
  readonly settings: ConnectionSettings | undefined;
  /** `http.requestTimeout`: how long one message's exchange with the target may take (deadline.ts). */
  readonly timeoutMs: number | undefined;
  /** Backend `health`: passive health and eviction of the target's endpoints (pool.ts); undefined: not tracked. */
  readonly health: TargetHealthPolicy | undefined;
  /** Writes the credentials into one upstream request (a promise only for signed or exchanged tokens); `call` when `needsCall`. */
  prepare(headers: UpstreamHeaders, path: string, policy: PolicyContext | undefined, call?: UpstreamCall): Prepared | Promise<Prepared>;
  /** Cloud credentials (auth.cloudA/B/C) sign or audience the request: `prepare` needs its method, Host and body. */
  readonly needsCall: boolean;
}

/** Backend `health` compiled: the member and its unhealthyCondition. */
export interface TargetHealthPolicy {
  readonly spec: NonNullable<BackendPolicy['health']>;
  readonly unhealthy: Program | undefined;
}

export interface Prepared {
  readonly headers: UpstreamHeaders;
  readonly path: string;
}

const NO_IDENTITY: RequestIdentity = Object.freeze({});

/**
 * The effective policy of `target` for a request: the translator wrote every target's complete
 * policy (policy objects < backend inline < sectionName < the target's own `policies`) into the
 * route's backend policy, so this only looks it up. Without a route policy (a handler driven
 * outside a gateway route) the target's own `policies` are all there is.
 */
export function targetPolicy(route: BackendPolicy | undefined, target: McpTargetIR): BackendPolicy | undefined {
  return subBackendPolicy(route, target.name, target.policies);
}

/** Compiles a target's effective policy; never throws (a problem becomes `failure`). */
export function compileTargetAccess(policy: BackendPolicy | undefined): TargetAccess {
  if (!policy) return PLAIN;
  const problems: string[] = [];
  for (const invalid of policy.invalid ?? []) problems.push(`${invalid.source}: ${invalid.message}`);
  const auth = policy.auth;
  for (const gap of unsupportedMembers(policy)) problems.push(gap.message);
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
  let health: TargetHealthPolicy | undefined;
  if (policy.health) {
    const condition = policy.health.unhealthyCondition;
    const compiled = condition === undefined ? undefined : compile(condition, { expect: ['bool'] });
    if (compiled && !compiled.ok) problems.push(`health.unhealthyCondition: ${compiled.error.message}`);
    else health = { spec: policy.health, unhealthy: compiled?.program };
  }
  const timeout = policy.http?.requestTimeoutMs;
  return {
    failure: problems.length > 0 ? `backend policy cannot be applied: ${problems.join('; ')}` : undefined,
    settings,
    timeoutMs: timeout !== undefined && timeout > 0 ? timeout : undefined,
    health,
    prepare,
    needsCall: usesCloudCredentials(auth),
  };
}

const PLAIN: TargetAccess = Object.freeze({ failure: undefined, settings: undefined, timeoutMs: undefined, health: undefined, needsCall: false, prepare: (headers: UpstreamHeaders, path: string) => ({ headers, path }) });

function credentialWriter(auth: BackendAuthPolicy): TargetAccess['prepare'] {
  if (usesCloudCredentials(auth)) return compileCloudCredentials(auth);
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
