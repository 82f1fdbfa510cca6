/** Anthropic Messages wire format, including thinking blocks, streaming events and errors. */

export interface CacheControl { type: 'ephemeral'; ttl?: '5m' | '1h' }

export type MessagesImageSource =
  | { type: 'base64'; media_type: string; data: string }
  | { type: 'url'; url: string };

export type MessagesContentBlock =
  | { type: 'text'; text: string; cache_control?: CacheControl; citations?: unknown[] | null }
  | { type: 'image'; source: MessagesImageSource; cache_control?: CacheControl }
  | { type: 'document'; source: Record<string, unknown>; cache_control?: CacheControl }
  | { type: 'tool_use'; id: string; name: string; input: unknown; cache_control?: CacheControl }
  | {
      type: 'tool_result';
      tool_use_id: string;
      content?: string | ({ type: 'text'; text: string } | { type: 'image'; source: MessagesImageSource })[];
      is_error?: boolean;
      cache_control?: CacheControl;
    }
  | { type: 'thinking'; thinking: string; signature: string }
  | { type: 'redacted_thinking'; data: string }
  /** Anthropic's own tools (web search…): the call and its result, in responses and replayed history. */
  | { type: 'server_tool_use'; id: string; name: string; input: unknown }
  | { type: 'web_search_tool_result'; tool_use_id: string; content: MessagesWebSearchResult[] | { type: 'web_search_tool_result_error'; error_code: string } }
  | { type: 'web_fetch_tool_result' | 'code_execution_tool_result'; tool_use_id: string; content: unknown };

export interface MessagesWebSearchResult { type: 'web_search_result'; url: string; title: string; encrypted_content: string; page_age?: string | null }

/** A text block's source when the model cites a web search result. */
export interface MessagesWebSearchCitation {
  type: 'web_search_result_location';
  url: string;
  title: string | null;
  cited_text: string;
  encrypted_index: string;
}

export interface MessagesMessage { role: 'user' | 'assistant'; content: string | MessagesContentBlock[] }

export interface MessagesTool {
  name: string;
  description?: string;
  input_schema: Record<string, unknown>;
  cache_control?: CacheControl;
  type?: string;
}

export type MessagesToolChoice =
  | { type: 'auto'; disable_parallel_tool_use?: boolean }
  | { type: 'any'; disable_parallel_tool_use?: boolean }
  | { type: 'tool'; name: string; disable_parallel_tool_use?: boolean }
  | { type: 'none' };

export interface MessagesRequest {
  model: string;
  messages: MessagesMessage[];
  max_tokens: number;
  system?: string | { type: 'text'; text: string; cache_control?: CacheControl }[];
  tools?: MessagesTool[];
  tool_choice?: MessagesToolChoice;
  temperature?: number;
  top_p?: number;
  top_k?: number;
  stop_sequences?: string[];
  stream?: boolean;
  thinking?: { type: 'enabled'; budget_tokens: number } | { type: 'disabled' };
  metadata?: { user_id?: string };
  /** Vertex rawPredict carries the API version in the body instead of a header. */
  anthropic_version?: string;
  [extra: string]: unknown;
}

export type MessagesStopReason = 'end_turn' | 'max_tokens' | 'stop_sequence' | 'tool_use' | 'pause_turn' | 'refusal';

export interface MessagesUsage {
  input_tokens: number;
  output_tokens: number;
  cache_creation_input_tokens?: number | null;
  cache_read_input_tokens?: number | null;
}

export interface MessagesResponse {
  id: string;
  type: 'message';
  role: 'assistant';
  model: string;
  content: MessagesContentBlock[];
  stop_reason: MessagesStopReason | null;
  stop_sequence: string | null;
  usage: MessagesUsage;
}

export type MessagesDelta =
  | { type: 'text_delta'; text: string }
  | { type: 'input_json_delta'; partial_json: string }
  | { type: 'thinking_delta'; thinking: string }
  | { type: 'signature_delta'; signature: string }
  | { type: 'citations_delta'; citation: { type: string } & Partial<MessagesWebSearchCitation> };

export type MessagesStreamEvent =
  | { type: 'message_start'; message: MessagesResponse }
  | { type: 'content_block_start'; index: number; content_block: MessagesContentBlock }
  | { type: 'content_block_delta'; index: number; delta: MessagesDelta }
  | { type: 'content_block_stop'; index: number }
  | { type: 'message_delta'; delta: { stop_reason: MessagesStopReason | null; stop_sequence: string | null }; usage: Partial<MessagesUsage> }
  | { type: 'message_stop' }
  | { type: 'ping' }
  | MessagesError;

export type MessagesErrorType =
  | 'invalid_request_error' | 'authentication_error' | 'permission_error' | 'not_found_error'
  | 'request_too_large' | 'rate_limit_error' | 'api_error' | 'overloaded_error';

export interface MessagesError { type: 'error'; error: { type: MessagesErrorType; message: string } }

export interface CountTokensRequest extends Omit<MessagesRequest, 'max_tokens'> { max_tokens?: number }
export interface CountTokensResponse { input_tokens: number }
