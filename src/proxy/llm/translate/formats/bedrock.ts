/** AWS Bedrock Converse wire format and the converse-stream events (carried in AWS binary event-stream frames). */

export type ConverseImageFormat = 'png' | 'jpeg' | 'gif' | 'webp';

export type ConverseToolResultContent = { text: string } | { json: unknown } | { image: { format: ConverseImageFormat; source: { bytes: string } } };

export type ConverseContentBlock =
  | { text: string }
  | { image: { format: ConverseImageFormat; source: { bytes: string } } }
  | { toolUse: { toolUseId: string; name: string; input: unknown } }
  | { toolResult: { toolUseId: string; content: ConverseToolResultContent[]; status?: 'success' | 'error' } }
  | { reasoningContent: { reasoningText: { text: string; signature?: string } } | { redactedContent: string } }
  | { cachePoint: { type: 'default' } };

export interface ConverseMessage { role: 'user' | 'assistant'; content: ConverseContentBlock[] }

export interface ConverseTool { toolSpec: { name: string; description?: string; inputSchema: { json: Record<string, unknown> } } }

export interface ConverseRequest {
  messages: ConverseMessage[];
  system?: ({ text: string } | { cachePoint: { type: 'default' } })[];
  inferenceConfig?: { maxTokens?: number; temperature?: number; topP?: number; stopSequences?: string[] };
  toolConfig?: { tools: (ConverseTool | { cachePoint: { type: 'default' } })[]; toolChoice?: { auto: object } | { any: object } | { tool: { name: string } } };
  additionalModelRequestFields?: Record<string, unknown>;
  guardrailConfig?: { guardrailIdentifier: string; guardrailVersion: string; trace?: 'enabled' | 'disabled' };
  [extra: string]: unknown;
}

export type ConverseStopReason =
  | 'end_turn' | 'tool_use' | 'max_tokens' | 'stop_sequence' | 'guardrail_intervened' | 'content_filtered';

export interface ConverseUsage {
  /** Excludes cache reads and writes. */
  inputTokens: number;
  outputTokens: number;
  totalTokens: number;
  cacheReadInputTokens?: number;
  cacheWriteInputTokens?: number;
}

export interface ConverseResponse {
  output: { message: ConverseMessage };
  stopReason: ConverseStopReason;
  usage: ConverseUsage;
  metrics?: { latencyMs: number };
}

/** Payloads of converse-stream events, keyed by the frame's `:event-type` header. */
export interface ConverseStreamEvents {
  messageStart: { role: 'assistant' };
  contentBlockStart: { contentBlockIndex: number; start: { toolUse?: { toolUseId: string; name: string } } };
  contentBlockDelta: {
    contentBlockIndex: number;
    delta: { text?: string; toolUse?: { input: string }; reasoningContent?: { text?: string; signature?: string; redactedContent?: string } };
  };
  contentBlockStop: { contentBlockIndex: number };
  messageStop: { stopReason: ConverseStopReason; additionalModelResponseFields?: unknown };
  metadata: { usage: ConverseUsage; metrics?: { latencyMs: number } };
}

export interface ConverseCountTokensRequest { input: { converse: Pick<ConverseRequest, 'messages' | 'system' | 'toolConfig'> } }
export interface ConverseCountTokensResponse { inputTokens: number }
