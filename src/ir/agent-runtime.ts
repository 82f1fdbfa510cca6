/**
 * A cloud-A agent runtime backend (ProxyBackend `spec.cloudA.agentRuntime`): every request routed
 * to it is one invocation of the runtime (Bedrock AgentCore `InvokeAgentRuntime`,
 * `POST /runtimes/<id>/invocations`), SigV4-signed with the backend's cloud-A credentials; the
 * proxy's agent-runtime handler serves it (src/proxy/backends/agent-runtime).
 */
export interface AgentRuntimeIR {
  /** The runtime's ARN or id as the operator wrote it; the proxy URL-encodes it as one path segment. */
  readonly runtimeId: string;
  /** An endpoint name or version (`qualifier` query parameter); absent: the runtime's default endpoint. */
  readonly qualifier?: string;
  /** The region named by an ARN id (`arn:<partition>:bedrock-agentcore:<region>:…`): the default when the policy names none. */
  readonly region?: string;
}

