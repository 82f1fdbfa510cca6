/** Dispatch from a wire format to its reader, writer, stream decoder and stream encoder. */
import type { Request, Response } from './canonical.ts';
import type { TranslationContext } from './context.ts';
import { readChatRequest, writeChatRequest, type ChatWriteOptions } from './convert/chat/request.ts';
import { readChatResponse, writeChatResponse } from './convert/chat/response.ts';
import { writeConverseRequest } from './convert/converse/request.ts';
import { readConverseResponse } from './convert/converse/response.ts';
import type { ToolNameMap } from './convert/tool-names.ts';
import { writeGeminiRequest } from './convert/gemini/request.ts';
import { readGeminiResponse } from './convert/gemini/response.ts';
import { readMessagesRequest, writeMessagesRequest } from './convert/messages/request.ts';
import { readMessagesResponse, writeMessagesResponse } from './convert/messages/response.ts';
import { addWebSearch } from './convert/responses/hosted-tools.ts';
import { readResponsesRequest } from './convert/responses/request.ts';
import { writeResponsesResponse } from './convert/responses/response.ts';
import type { ChatResponse } from './formats/openai-chat.ts';
import type { MessagesResponse } from './formats/anthropic.ts';
import type { GeminiResponse } from './formats/gemini.ts';
import type { ConverseResponse } from './formats/bedrock.ts';
import type { UpstreamFormat } from './providers/types.ts';
import { TranslationError } from './errors.ts';
import { ChatStreamDecoder } from './stream/decode/chat.ts';
import { ConverseStreamDecoder } from './stream/decode/converse.ts';
import type { UpstreamDecoder } from './stream/decode/decoder.ts';
import { GeminiStreamDecoder } from './stream/decode/gemini.ts';
import { MessagesStreamDecoder } from './stream/decode/messages.ts';
import { ResponsesStreamDecoder } from './stream/decode/responses.ts';
import { readResponsesResponse, writeResponsesRequest } from './convert/responses/upstream.ts';
import type { ResponsesResponse } from './formats/openai-responses.ts';
import { ChatStreamEncoder } from './stream/encode/chat.ts';
import type { ClientEncoder } from './stream/encode/encoder.ts';
import { MessagesStreamEncoder } from './stream/encode/messages.ts';
import { ResponsesStreamEncoder } from './stream/encode/responses.ts';

/** The generation formats a client speaks. */
export type ClientFormat = 'chat' | 'messages' | 'responses';

/** A body whose shape the reader cannot walk is the client's mistake (400), never a gateway crash. */
export function readClientRequest(format: ClientFormat, body: unknown): Request {
  try {
    if (format === 'chat') return readChatRequest(body);
    if (format === 'messages') return readMessagesRequest(body);
    return readResponsesRequest(body);
  } catch (e) {
    if (e instanceof TranslationError) throw e;
    throw new TranslationError(`malformed request body: ${(e as Error).message}`);
  }
}

export interface WriteOptions extends ChatWriteOptions {
  readonly toolNames: ToolNameMap;
}

/** Canonical request → upstream generation body (with the provider's own web search when the client asked for one). */
export function writeUpstreamRequest(format: UpstreamFormat, req: Request, opts: WriteOptions): Record<string, unknown> {
  const body = writeGenerationBody(format, req, opts);
  return req.webSearch ? addWebSearch(format, body, req.webSearch, req.toolChoice) : body;
}

function writeGenerationBody(format: UpstreamFormat, req: Request, opts: WriteOptions): Record<string, unknown> {
  switch (format) {
    case 'chat': return writeChatRequest(req, opts);
    case 'messages': return writeMessagesRequest(req, opts.toolNames);
    case 'gemini': return writeGeminiRequest(req);
    case 'converse': return writeConverseRequest(req, opts.toolNames);
    case 'responses': return writeResponsesRequest(req);
    default: throw new Error(`${format} is not a generation format`);
  }
}

export function readUpstreamResponse(format: UpstreamFormat, body: unknown, req: Request, names: ToolNameMap, ctx: TranslationContext): Response {
  switch (format) {
    case 'chat': return readChatResponse(body as ChatResponse);
    case 'messages': return readMessagesResponse(body as MessagesResponse, names);
    case 'gemini': return readGeminiResponse(body as GeminiResponse, req.model, ctx);
    case 'converse': return readConverseResponse(body as ConverseResponse, req.model, names, ctx);
    case 'responses': return readResponsesResponse(body as ResponsesResponse);
    default: throw new Error(`${format} is not a generation format`);
  }
}

export function writeClientResponse(format: ClientFormat, res: Response, req: Request, ctx: TranslationContext): unknown {
  if (format === 'chat') return writeChatResponse(res, ctx);
  if (format === 'messages') return writeMessagesResponse(res, ctx);
  return writeResponsesResponse(res, req, ctx);
}

export function upstreamDecoder(format: UpstreamFormat, names: ToolNameMap, ctx: TranslationContext): UpstreamDecoder {
  switch (format) {
    case 'chat': return new ChatStreamDecoder();
    case 'messages': return new MessagesStreamDecoder(names);
    case 'gemini': return new GeminiStreamDecoder(ctx);
    case 'converse': return new ConverseStreamDecoder(names);
    case 'responses': return new ResponsesStreamDecoder();
    default: throw new Error(`${format} does not stream`);
  }
}

export function clientEncoder(format: ClientFormat, req: Request, includeUsage: boolean, ctx: TranslationContext): ClientEncoder {
  if (format === 'chat') return new ChatStreamEncoder({ model: req.model, includeUsage }, ctx);
  if (format === 'messages') return new MessagesStreamEncoder({ model: req.model }, ctx);
  return new ResponsesStreamEncoder(req, ctx);
}
