/**
 * ProxyBackend `spec.cloudA.agentRuntime` → IR. The runtime is named by its ARN
 * (`arn:<partition>:bedrock-agentcore:<region>:<account>:runtime/<name>`) or its bare id; an ARN
 * also gives the region the proxy invokes it in unless the backend policy's `auth.cloudA.region`
 * names another (docs/agent-runtime.md).
 */
import type { Condition } from '../../api/gateway/object.ts';
import type { AgentRuntimeIR } from '../../ir/agent-runtime.ts';
import { isDict, type Dict } from './read.ts';
import { condition } from './status/conditions.ts';

/** An agent runtime ARN: partition, region, 12-digit account, `runtime/<name>`. */
const RUNTIME_ARN = /^arn:aws[a-z-]*:bedrock-agentcore:([a-z0-9-]+):\d{12}:runtime\/[A-Za-z0-9_-]+$/;
/** A bare runtime id (`<name>-<suffix>`): letters, digits, `_` and `-`. */
const RUNTIME_ID = /^[A-Za-z0-9][A-Za-z0-9_-]*$/;
/** An endpoint name or version number. */
const QUALIFIER = /^[A-Za-z0-9][A-Za-z0-9_-]*$/;

export type AgentRuntimeTranslation =
  | { readonly ir: AgentRuntimeIR; readonly conditions: readonly Condition[] }
  | { readonly ir?: undefined; readonly problem: string; readonly conditions: readonly Condition[] };

export function translateAgentRuntime(spec: Dict, generation: number | undefined): AgentRuntimeTranslation {
  const refuse = (problem: string): AgentRuntimeTranslation => ({ problem, conditions: [condition('Accepted', false, 'Invalid', problem, generation)] });
  const cloudA = spec.cloudA;
  if (!isDict(cloudA) || !isDict(cloudA.agentRuntime)) return refuse('spec.cloudA.agentRuntime must be an object');
  const { agentRuntimeId, qualifier } = cloudA.agentRuntime;
  if (typeof agentRuntimeId !== 'string' || agentRuntimeId.length < 1 || agentRuntimeId.length > 1024) return refuse('spec.cloudA.agentRuntime.agentRuntimeId must be a string of 1..1024 characters');
  const arn = RUNTIME_ARN.exec(agentRuntimeId);
  if (!arn && (agentRuntimeId.startsWith('arn:') || !RUNTIME_ID.test(agentRuntimeId))) {
    return refuse('spec.cloudA.agentRuntime.agentRuntimeId must be an agent runtime ARN (arn:aws:bedrock-agentcore:<region>:<account>:runtime/<name>) or a runtime id of letters, digits, _ and -');
  }
  if (qualifier !== undefined && (typeof qualifier !== 'string' || qualifier.length > 256 || !QUALIFIER.test(qualifier))) {
    return refuse('spec.cloudA.agentRuntime.qualifier must be an endpoint name or version of 1..256 letters, digits, _ and -');
  }
  const ir: AgentRuntimeIR = { runtimeId: agentRuntimeId, ...(qualifier !== undefined ? { qualifier } : {}), ...(arn ? { region: arn[1] } : {}) };
  return { ir, conditions: [condition('Accepted', true, 'Accepted', 'Agent runtime backend is accepted', generation)] };
}
