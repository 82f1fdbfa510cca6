/**
 * Backend policy members and auth mechanisms an upstream call of a given kind cannot apply
 * (SPEC.md BackendFull). Every kind fails closed on them: a request under such a policy is refused
 * and never sent, rather than sent without the check or credential the policy asks for.
 *
 * Today every kind applies every member and mechanism: extAuth runs on Service endpoints, AI
 * providers and MCP requests (ext-auth.ts, gate.ts), and cloud credentials (auth.cloudA/B/C) on
 * all three through the shared credentials (policies/credentials/backend-credentials.ts,
 * cloud-auth.ts). `a2a` backends are forwarded as Service endpoints are (kind `service`: the same
 * Exchange), so they apply everything too. A kind added later (tunnels) lists its gaps here until it applies them.
 */
import type { BackendAuthPolicy, BackendMember, BackendPolicy } from '../../../ir/policy.ts';
import { parseServiceAccount } from '../credentials/cloud-tokens.ts';

/** The kinds of upstream call the backend-policy layer serves. */
export type UpstreamKind = 'service' | 'ai' | 'mcp' | 'agentRuntime';

type AuthKind = 'cloudA' | 'cloudB' | 'cloudC';

/** Per kind: members and auth mechanisms not applied. */
const UNSUPPORTED: Readonly<Record<UpstreamKind, { readonly members: readonly BackendMember[]; readonly auth: readonly AuthKind[] }>> = {
  service: { members: [], auth: [] },
  ai: { members: [], auth: [] },
  mcp: { members: [], auth: [] },
  // A cloud-A agent runtime authenticates SigV4 (or a bearer token its inbound authorizer takes): a
  // cloud-B/cloud-C token would be sent next to the signature and refused there (backends/agent-runtime).
  agentRuntime: { members: [], auth: ['cloudB', 'cloudC'] },
};

export interface UnsupportedMember {
  readonly member: BackendMember;
  readonly message: string;
}

/** What `policy` asks for that an upstream call of `kind` cannot apply. */
export function unsupportedOn(kind: UpstreamKind, policy: BackendPolicy, table: typeof UNSUPPORTED = UNSUPPORTED): UnsupportedMember[] {
  const out: UnsupportedMember[] = [];
  const gaps = table[kind];
  for (const member of gaps.members) if (policy[member] !== undefined) out.push({ member, message: `backend ${member} is not supported yet` });
  for (const auth of gaps.auth) if (policy.auth?.[auth] !== undefined) out.push({ member: 'auth', message: `backend auth ${auth} is not supported yet` });
  if (policy.auth) for (const message of unusableCloudCredentials(kind, policy.auth)) out.push({ member: 'auth', message });
  return out;
}

/**
 * Cloud credentials whose configuration alone shows they cannot work, so every request under
 * them would fail: refused when the policy is compiled (500 policy_invalid on every kind, nothing
 * sent) rather than on each request. What depends on the environment (ambient keys, a metadata
 * server, a token endpoint) is found per request instead.
 */
export function unusableCloudCredentials(kind: UpstreamKind, auth: BackendAuthPolicy): string[] {
  const out: string[] = [];
  // An AI provider that needs signing names its service (providerG), an agent runtime is `bedrock-agentcore`; any other upstream has no default.
  if (auth.cloudA && kind !== 'ai' && kind !== 'agentRuntime' && !auth.cloudA.serviceName) out.push('auth.cloudA needs serviceName (the SigV4 signing service) on a Service, static or MCP backend');
  const secret = auth.cloudB?.secret;
  if (secret && (!secret.clientID || !secret.tenantID || !secret.clientSecret)) out.push('auth.cloudB: the Secret needs clientID, tenantID and clientSecret');
  if (auth.cloudC?.secret !== undefined) {
    try {
      parseServiceAccount(auth.cloudC.secret);
    } catch (err) {
      out.push(`auth.cloudC: the Secret does not hold a service account key (${err instanceof SyntaxError ? 'not JSON' : (err as Error).message})`);
    }
  }
  return out;
}

/** What MCP target calls cannot apply (the MCP backend's list; `unsupportedOn('mcp', …)`). */
export function unsupportedMembers(policy: BackendPolicy): UnsupportedMember[] {
  return unsupportedOn('mcp', policy);
}
