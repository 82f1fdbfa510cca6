/** OpenAI chat completions wire format (the subset a gateway reads or writes; unknown fields pass through). */

export type ChatContentPart =
  | { type: 'text'; text: string }
  | { type: 'image_url'; image_url: { url: string; detail?: 'auto' | 'low' | 'high' } }
  | { type: 'input_audio'; input_audio: { data: string; format: string } }
  | { type: 'file'; file: { file_data?: string; file_id?: string; filename?: string } }
  | { type: 'refusal'; refusal: string };

export interface ChatToolCall {
  id: string;
  type: 'function';
  function: { name: string; arguments: string };
  /** Gemini's OpenAI-compatible convention for carrying a thoughtSignature on a call. */
  extra_content?: { google?: { thought_signature?: string } };
}

/** LiteLLM's convention for Anthropic-style thinking blocks on a chat message, so signatures round-trip. */
export type ChatThinkingBlock =
  | { type: 'thinking'; thinking: string; signature?: string }
  | { type: 'redacted_thinking'; data: string };

export type ChatMessage =
  | { role: 'system' | 'developer'; content: string | ChatContentPart[]; name?: string }
  | { role: 'user'; content: string | ChatContentPart[]; name?: string }
  | {
      role: 'assistant';
      content?: string | ChatContentPart[] | null;
      tool_calls?: ChatToolCall[];
      refusal?: string | null;
      reasoning_content?: string;
      thinking_blocks?: ChatThinkingBlock[];
      name?: string;
    }
  | { role: 'tool'; tool_call_id: string; content: string | ChatContentPart[] };

export interface ChatTool {
  type: 'function';
  function: { name: string; description?: string; parameters?: Record<string, unknown>; strict?: boolean };
}

export type ChatToolChoice = 'none' | 'auto' | 'required' | { type: 'function'; function: { name: string } };

export type ChatResponseFormat =
  | { type: 'text' }
  | { type: 'json_object' }
  | { type: 'json_schema'; json_schema: { name: string; schema?: Record<string, unknown>; strict?: boolean; description?: string } };

export interface ChatRequest {
  model: string;
  messages: ChatMessage[];
  tools?: ChatTool[];
  tool_choice?: ChatToolChoice;
  parallel_tool_calls?: boolean;
  max_tokens?: number;
  max_completion_tokens?: number;
  temperature?: number;
  top_p?: number;
  stop?: string | string[];
  stream?: boolean;
  stream_options?: { include_usage?: boolean };
  /** OpenAI search models: the search runs on the provider; other providers use their own (Anthropic web search, Google Search). */
  web_search_options?: { search_context_size?: string; user_location?: { type?: string; approximate?: Record<string, unknown> } | null };
  response_format?: ChatResponseFormat;
  reasoning_effort?: 'minimal' | 'low' | 'medium' | 'high';
  user?: string;
  n?: number;
  [extra: string]: unknown;
}

export type ChatFinishReason = 'stop' | 'length' | 'tool_calls' | 'content_filter' | 'function_call';

export interface ChatUsage {
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
  prompt_tokens_details?: { cached_tokens?: number; audio_tokens?: number };
  completion_tokens_details?: { reasoning_tokens?: number };
}

export interface ChatResponseMessage {
  role: 'assistant';
  content: string | null;
  refusal: string | null;
  tool_calls?: ChatToolCall[];
  reasoning_content?: string;
  thinking_blocks?: ChatThinkingBlock[];
  annotations?: ChatAnnotation[];
}

/** A web source for a span of `content` (indices in characters). */
export interface ChatAnnotation {
  type: 'url_citation';
  url_citation: { url: string; title: string; start_index: number; end_index: number };
}

export interface ChatResponse {
  id: string;
  object: 'chat.completion';
  created: number;
  model: string;
  choices: { index: number; message: ChatResponseMessage; finish_reason: ChatFinishReason | null; logprobs: null }[];
  usage?: ChatUsage;
  system_fingerprint?: string;
}

export interface ChatChunkToolCall {
  index: number;
  id?: string;
  type?: 'function';
  function?: { name?: string; arguments?: string };
  extra_content?: { google?: { thought_signature?: string } };
}

export interface ChatChunk {
  id: string;
  object: 'chat.completion.chunk';
  created: number;
  model: string;
  choices: {
    index: number;
    delta: {
      role?: 'assistant';
      content?: string | null;
      tool_calls?: ChatChunkToolCall[];
      refusal?: string | null;
      reasoning_content?: string;
      thinking_blocks?: ChatThinkingBlock[];
      annotations?: ChatAnnotation[];
    };
    finish_reason: ChatFinishReason | null;
    logprobs?: null;
  }[];
  usage?: ChatUsage | null;
}
