/**
 * Where an agent runtime invocation goes (Bedrock AgentCore `InvokeAgentRuntime`):
 * `POST https://bedrock-agentcore.<region>.amazonaws.com/runtimes/<runtime id or ARN, URL-encoded
 * as one path segment>/invocations?qualifier=<qualifier>`. The region is the backend policy's
 * `auth.cloudA.region`, else the one in the runtime's ARN, else `AWS_REGION`; the endpoint can be
 * replaced by `AWS_ENDPOINT_URL_BEDROCK_AGENTCORE`, the AWS SDKs' service-specific override (a
 * VPC endpoint, or a local fake in tests).
 */
import type { AgentRuntimeIR } from '../../../ir/agent-runtime.ts';

/** The SigV4 signing service of the AgentCore data plane. */
export const AGENT_RUNTIME_SERVICE = 'bedrock-agentcore';

/** The endpoint override variable (AWS SDKs: `AWS_ENDPOINT_URL_<SERVICE ID>`). */
export const ENDPOINT_OVERRIDE_VARIABLE = 'AWS_ENDPOINT_URL_BEDROCK_AGENTCORE';

export interface RuntimeOrigin {
  readonly tls: boolean;
  readonly host: string;
  readonly port: number;
  /** The Host header (and the SigV4 `host`): the port only when it is not the scheme's default. */
  readonly authority: string;
  /** `https://host:port`, the pool key. */
  readonly origin: string;
}

/** Region names as AWS writes them; anything else would end up in a host name. */
const REGION = /^[a-z]{2}(?:-[a-z]+)+-\d{1,2}$/;

/** The region to invoke in, or undefined when neither the policy, the ARN nor the environment names a valid one. */
export function runtimeRegion(ir: AgentRuntimeIR, policyRegion: string | undefined, env: NodeJS.ProcessEnv): string | undefined {
  const region = policyRegion ?? ir.region ?? env.AWS_REGION;
  return region !== undefined && REGION.test(region) ? region : undefined;
}

/** The endpoint for `region`: the override when set (an http:// URL is allowed for local fakes), else the regional one. */
export function runtimeOrigin(region: string, override: string | undefined): RuntimeOrigin {
  if (override) {
    const url = new URL(override);
    const tls = url.protocol === 'https:';
    const port = url.port === '' ? (tls ? 443 : 80) : Number(url.port);
    return origin(tls, url.hostname.replace(/^\[|\]$/g, ''), port);
  }
  // China regions live under amazonaws.com.cn, as for every AWS service.
  const suffix = region.startsWith('cn-') ? 'amazonaws.com.cn' : 'amazonaws.com';
  return origin(true, `${AGENT_RUNTIME_SERVICE}.${region}.${suffix}`, 443);
}

function origin(tls: boolean, host: string, port: number): RuntimeOrigin {
  const bare = host.includes(':') ? `[${host}]` : host;
  const authority = port === (tls ? 443 : 80) ? bare : `${bare}:${port}`;
  return { tls, host, port, authority, origin: `${tls ? 'https' : 'http'}://${bare}:${port}` };
}

/**
 * The request target: the runtime id (an ARN holds `:` and `/`) encoded as one path segment, as
 * the AWS SDKs encode a non-greedy label (encodeURIComponent plus `!'()*`), and the qualifier as
 * the `qualifier` query parameter.
 */
export function invocationPath(ir: AgentRuntimeIR): string {
  const path = `/runtimes/${encodeLabel(ir.runtimeId)}/invocations`;
  return ir.qualifier === undefined ? path : `${path}?qualifier=${encodeLabel(ir.qualifier)}`;
}

function encodeLabel(value: string): string {
  return encodeURIComponent(value).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
}
