/**
 * Backend policy members and auth mechanisms an upstream call of a given kind cannot apply yet
 * (SPEC.md BackendFull). Every kind fails closed on them: a request under such a policy is refused
 * and never sent, rather than sent without the check or credential the policy asks for.
 */
import type { BackendMember, BackendPolicy } from '../../../ir/policy.ts';

/** The kinds of upstream call the backend-policy layer serves. */
export type UpstreamKind = 'service' | 'ai' | 'mcp';

type AuthKind = 'cloudA' | 'cloudB' | 'cloudC';

/**
 * Per kind: members and auth mechanisms not applied. Service endpoints, AI providers and MCP
 * requests apply extAuth (policies/backend/ext-auth.ts, gate.ts); cloud signing/tokens exist only
 * in the LLM gateway's credentials.
 */
const UNSUPPORTED: Readonly<Record<UpstreamKind, { readonly members: readonly BackendMember[]; readonly auth: readonly AuthKind[] }>> = {
  service: { members: [], auth: ['cloudA', 'cloudB', 'cloudC'] },
  ai: { members: [], auth: [] },
  mcp: { members: [], auth: ['cloudA', 'cloudB', 'cloudC'] },
};

export interface UnsupportedMember {
  readonly member: BackendMember;
  readonly message: string;
}

/** What `policy` asks for that an upstream call of `kind` cannot apply. */
export function unsupportedOn(kind: UpstreamKind, policy: BackendPolicy): UnsupportedMember[] {
  const out: UnsupportedMember[] = [];
  const table = UNSUPPORTED[kind];
  for (const member of table.members) if (policy[member] !== undefined) out.push({ member, message: `backend ${member} is not supported yet` });
  for (const auth of table.auth) if (policy.auth?.[auth] !== undefined) out.push({ member: 'auth', message: `backend auth ${auth} is not supported yet` });
  return out;
}

/** What MCP target calls cannot apply (the MCP backend's list; `unsupportedOn('mcp', …)`). */
export function unsupportedMembers(policy: BackendPolicy): UnsupportedMember[] {
  return unsupportedOn('mcp', policy);
}
