/**
 * Backend policy members and auth mechanisms that no upstream call can apply yet (SPEC.md
 * BackendFull). Every kind of upstream call (Service endpoints, MCP targets …) fails closed on
 * them: a request under such a policy is refused and never sent, rather than sent without the
 * check or credential the policy asks for.
 */
import type { BackendMember, BackendPolicy } from '../../ir/policy.ts';

const UNSUPPORTED_MEMBERS: readonly BackendMember[] = ['extAuth'];
const UNSUPPORTED_AUTH = ['cloudA', 'cloudB', 'cloudC'] as const;

export interface UnsupportedMember {
  readonly member: BackendMember;
  readonly message: string;
}

export function unsupportedMembers(policy: BackendPolicy): UnsupportedMember[] {
  const out: UnsupportedMember[] = [];
  for (const member of UNSUPPORTED_MEMBERS) if (policy[member] !== undefined) out.push({ member, message: `backend ${member} is not supported yet` });
  for (const kind of UNSUPPORTED_AUTH) if (policy.auth?.[kind] !== undefined) out.push({ member: 'auth', message: `backend auth ${kind} is not supported yet` });
  return out;
}
