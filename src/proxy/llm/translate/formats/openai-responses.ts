/** OpenAI Responses wire format: request input items, the response object and the streaming events. */

export type ResponsesInputContent =
  | { type: 'input_text'; text: string }
  | { type: 'input_image'; image_url?: string; file_id?: string; detail?: 'auto' | 'low' | 'high' }
  | { type: 'input_file'; file_data?: string; file_id?: string; filename?: string }
  | { type: 'output_text'; text: string; annotations?: unknown[] }
  | { type: 'refusal'; refusal: string };

export interface ResponsesMessageItem {
  type?: 'message';
  id?: string;
  role: 'user' | 'assistant' | 'system' | 'developer';
  content: string | ResponsesInputContent[];
  status?: string;
}

export interface ResponsesFunctionCallItem {
  type: 'function_call';
  id?: string;
  call_id: string;
  name: string;
  arguments: string;
  status?: 'in_progress' | 'completed' | 'incomplete';
}

export interface ResponsesFunctionCallOutputItem {
  type: 'function_call_output';
  id?: string;
  call_id: string;
  output: string | ResponsesInputContent[];
}

export interface ResponsesReasoningItem {
  type: 'reasoning';
  id: string;
  summary: { type: 'summary_text'; text: string }[];
  content?: { type: 'reasoning_text'; text: string }[];
  encrypted_content?: string | null;
  status?: string;
}

export type ResponsesInputItem = ResponsesMessageItem | ResponsesFunctionCallItem | ResponsesFunctionCallOutputItem | ResponsesReasoningItem;

export interface ResponsesFunctionTool {
  type: 'function';
  name: string;
  description?: string | null;
  parameters?: Record<string, unknown> | null;
  strict?: boolean | null;
}

export type ResponsesToolChoice = 'none' | 'auto' | 'required' | { type: 'function'; name: string };

export type ResponsesTextFormat =
  | { type: 'text' }
  | { type: 'json_object' }
  | { type: 'json_schema'; name: string; schema: Record<string, unknown>; strict?: boolean | null; description?: string };

export interface ResponsesRequest {
  model: string;
  input: string | ResponsesInputItem[];
  instructions?: string | null;
  tools?: (ResponsesFunctionTool | { type: string; [k: string]: unknown })[];
  tool_choice?: ResponsesToolChoice;
  parallel_tool_calls?: boolean;
  max_output_tokens?: number | null;
  temperature?: number | null;
  top_p?: number | null;
  stream?: boolean;
  text?: { format?: ResponsesTextFormat };
  reasoning?: { effort?: 'minimal' | 'low' | 'medium' | 'high' | null; summary?: string | null } | null;
  metadata?: Record<string, string>;
  user?: string;
  store?: boolean;
  [extra: string]: unknown;
}

export interface ResponsesOutputMessage {
  type: 'message';
  id: string;
  status: 'in_progress' | 'completed' | 'incomplete';
  role: 'assistant';
  content: ({ type: 'output_text'; text: string; annotations: unknown[]; logprobs?: unknown[] } | { type: 'refusal'; refusal: string })[];
}

/** A web search the provider ran (OpenAI's own, or a translated Anthropic/Gemini search). */
export interface ResponsesWebSearchCall {
  type: 'web_search_call';
  id: string;
  status: 'in_progress' | 'searching' | 'completed' | 'failed';
  action?: { type: 'search'; query: string; queries?: string[] };
}

/** Responses' url_citation annotation on output_text (indices in characters). */
export interface ResponsesUrlCitation {
  type: 'url_citation';
  start_index: number;
  end_index: number;
  title: string;
  url: string;
}

export type ResponsesOutputItem = ResponsesOutputMessage | Required<Pick<ResponsesFunctionCallItem, 'type' | 'id' | 'call_id' | 'name' | 'arguments' | 'status'>> | ResponsesReasoningItem | ResponsesWebSearchCall;

export interface ResponsesUsage {
  input_tokens: number;
  input_tokens_details: { cached_tokens: number };
  output_tokens: number;
  output_tokens_details: { reasoning_tokens: number };
  total_tokens: number;
}

export interface ResponsesResponse {
  id: string;
  object: 'response';
  created_at: number;
  status: 'completed' | 'incomplete' | 'failed' | 'in_progress';
  model: string;
  output: ResponsesOutputItem[];
  usage: ResponsesUsage | null;
  error: { code: string; message: string } | null;
  incomplete_details: { reason: 'max_output_tokens' | 'content_filter' } | null;
  instructions: string | null;
  metadata: Record<string, string>;
  parallel_tool_calls: boolean;
  temperature: number | null;
  top_p: number | null;
  max_output_tokens: number | null;
  tool_choice: ResponsesToolChoice;
  tools: unknown[];
  text: { format: ResponsesTextFormat };
  reasoning: { effort: string | null; summary: string | null } | null;
  [extra: string]: unknown;
}

/** Every streaming event carries `type` and a monotonically increasing `sequence_number`. */
export type ResponsesStreamEvent = { type: string; sequence_number: number; [k: string]: unknown };
