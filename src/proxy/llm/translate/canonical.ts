/**
 * The neutral conversation every format is read into and written from. Three client formats and
 * four upstream formats would need twelve direct converters; going through one shape needs seven
 * readers and writers, and a fix lands once.
 */
import type { Usage } from './usage.ts';

export type ImageSource =
  | { readonly kind: 'base64'; readonly mediaType: string; readonly data: string }
  | { readonly kind: 'url'; readonly url: string };

/**
 * Which vendor family produced an opaque reasoning signature. Anthropic and Bedrock (Claude) share
 * one; a signature is only ever replayed to its own family.
 */
export type SignatureFamily = 'anthropic' | 'gemini' | 'openai';

/**
 * A web source backing a span of text. `start`/`end` are UTF-16 offsets (JavaScript string
 * indices) into the text of the part that carries it; client writers convert them to their units.
 */
export interface Citation {
  readonly url: string;
  readonly title?: string;
  readonly citedText?: string;
  readonly start: number;
  readonly end: number;
}

export type Part =
  | { readonly type: 'text'; readonly text: string; readonly cache?: boolean; readonly citations?: readonly Citation[] }
  | { readonly type: 'image'; readonly source: ImageSource }
  | { readonly type: 'tool_call'; readonly id: string; readonly name: string; readonly arguments: string }
  | {
      readonly type: 'tool_result';
      readonly toolCallId: string;
      readonly content: readonly ({ readonly type: 'text'; readonly text: string } | { readonly type: 'image'; readonly source: ImageSource })[];
      readonly isError?: boolean;
    }
  /**
   * Reasoning. `signature` is opaque provider state (Anthropic/Bedrock signature, Gemini
   * thoughtSignature, Responses encrypted_content) that must travel back unchanged.
   */
  | { readonly type: 'thinking'; readonly text: string; readonly signature?: string; readonly family?: SignatureFamily }
  | { readonly type: 'redacted_thinking'; readonly data: string }
  /** A web search the provider ran itself (Anthropic server tool, Gemini grounding); never replayed upstream. */
  | { readonly type: 'web_search'; readonly id: string; readonly queries: readonly string[]; readonly failed?: boolean };

export interface Message {
  readonly role: 'user' | 'assistant';
  readonly parts: readonly Part[];
}

export interface Tool {
  readonly name: string;
  readonly description?: string;
  readonly parameters: Readonly<Record<string, unknown>>;
  readonly strict?: boolean;
}

/**
 * A search the provider runs itself (Responses `web_search`): Anthropic's `web_search` server
 * tool, Gemini's `googleSearch`. Writers for providers without one refuse the request.
 */
export interface WebSearch {
  readonly allowedDomains?: readonly string[];
  readonly userLocation?: { readonly city?: string; readonly region?: string; readonly country?: string; readonly timezone?: string };
}

export type ToolChoice = 'auto' | 'none' | 'required' | { readonly name: string };

export type OutputFormat =
  | { readonly type: 'json_object' }
  | { readonly type: 'json_schema'; readonly name: string; readonly schema: Readonly<Record<string, unknown>>; readonly strict?: boolean };

export interface Reasoning {
  readonly effort?: 'minimal' | 'low' | 'medium' | 'high';
  /** Explicit budget (Anthropic `thinking.budget_tokens`, Gemini `thinkingBudget`). */
  readonly budgetTokens?: number;
  /** Explicitly disabled by the client. */
  readonly disabled?: boolean;
}

export interface Request {
  readonly model: string;
  readonly system: readonly { readonly text: string; readonly cache?: boolean }[];
  readonly messages: readonly Message[];
  readonly tools?: readonly Tool[];
  readonly webSearch?: WebSearch;
  readonly toolChoice?: ToolChoice;
  readonly parallelToolCalls?: boolean;
  readonly maxTokens?: number;
  readonly temperature?: number;
  readonly topP?: number;
  readonly topK?: number;
  readonly stop?: readonly string[];
  readonly stream: boolean;
  readonly outputFormat?: OutputFormat;
  readonly reasoning?: Reasoning;
  readonly user?: string;
}

export type FinishReason = 'stop' | 'length' | 'tool_calls' | 'content_filter' | 'stop_sequence' | 'error';

export interface Response {
  readonly id: string;
  readonly model: string;
  readonly parts: readonly Part[];
  readonly finishReason: FinishReason;
  readonly stopSequence?: string;
  readonly usage?: Usage;
}

/**
 * Incremental events between an upstream stream decoder and a client stream encoder. Block
 * indices are the decoder's; the encoder assigns its own.
 */
export type StreamEvent =
  | { readonly type: 'start'; readonly id?: string; readonly model?: string; readonly usage?: Partial<Usage> }
  | { readonly type: 'text'; readonly text: string }
  | { readonly type: 'thinking'; readonly text: string }
  | { readonly type: 'thinking_signature'; readonly signature: string; readonly family?: SignatureFamily }
  | { readonly type: 'redacted_thinking'; readonly data: string }
  | { readonly type: 'tool_call_start'; readonly key: number; readonly id: string; readonly name: string }
  | { readonly type: 'tool_call_args'; readonly key: number; readonly delta: string }
  | { readonly type: 'finish'; readonly reason: FinishReason; readonly stopSequence?: string }
  | { readonly type: 'usage'; readonly usage: Partial<Usage> }
  | { readonly type: 'error'; readonly status: number; readonly errorType: string; readonly message: string }
  /** A provider-run web search finished. Like other non-text content it ends the current text run. */
  | { readonly type: 'web_search'; readonly id: string; readonly queries: readonly string[]; readonly failed?: boolean }
  /**
   * A source for a span of the current text run (the text since the last non-text event; bare
   * signatures do not end a run). Offsets are UTF-16, relative to the start of that run.
   */
  | { readonly type: 'citation'; readonly citation: Citation };
