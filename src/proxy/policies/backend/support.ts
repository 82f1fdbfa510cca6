/**
 * Backend policy members and auth mechanisms an upstream call of a given kind cannot apply
 * (SPEC.md BackendFull). Every kind fails closed on them: a request under such a policy is refused
 * and never sent, rather than sent without the check or credential the policy asks for.
 *
 * Today every kind applies every member and mechanism: extAuth runs on Service endpoints, AI
 * providers and MCP requests (ext-auth.ts, gate.ts), and cloud credentials (auth.cloudA/B/C) on
 * all three through the shared credentials (policies/credentials/backend-credentials.ts,
 * cloud-auth.ts). A kind added later (a2a, tunnels) lists its gaps here until it applies them.
 */
import type { BackendMember, BackendPolicy } from '../../../ir/policy.ts';

/** The kinds of upstream call the backend-policy layer serves. */
export type UpstreamKind = 'service' | 'ai' | 'mcp';

type AuthKind = 'cloudA' | 'cloudB' | 'cloudC';

/** Per kind: members and auth mechanisms not applied. */
const UNSUPPORTED: Readonly<Record<UpstreamKind, { readonly members: readonly BackendMember[]; readonly auth: readonly AuthKind[] }>> = {
  service: { members: [], auth: [] },
  ai: { members: [], auth: [] },
  mcp: { members: [], auth: [] },
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
  return out;
}

/** What MCP target calls cannot apply (the MCP backend's list; `unsupportedOn('mcp', …)`). */
export function unsupportedMembers(policy: BackendPolicy): UnsupportedMember[] {
  return unsupportedOn('mcp', policy);
}
