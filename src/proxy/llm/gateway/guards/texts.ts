/**
 * Where the text is in a client's request and in the answer the client gets, per wire format, as
 * slots a guard reads and a Mask writes back. Guards see what a person or a tool wrote, in every
 * role: system/developer prompts, user and assistant turns, tool results. Tool-call arguments,
 * images, audio and files are not text to a guard and pass as they are (docs/llm.md).
 */
import type { RouteType } from '../../../../ir/ai.ts';

type Dict = Record<string, unknown>;

/** One piece of text in a parsed body, and how to put a masked version in its place. */
export interface TextSlot {
  readonly role: string;
  readonly text: string;
  write(text: string): void;
}

/** Route types whose request text guards check (Realtime is checked message by message). */
export const GUARDED_REQUEST_ROUTES: ReadonlySet<RouteType> = new Set(['Completions', 'Messages', 'Responses', 'Embeddings']);
/** Route types whose answers carry text for response guards. */
export const GUARDED_RESPONSE_ROUTES: ReadonlySet<RouteType> = new Set(['Completions', 'Messages', 'Responses']);

function isDict(v: unknown): v is Dict {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function roleOf(m: Dict, fallback: string): string {
  return typeof m.role === 'string' ? m.role : fallback;
}

/** `holder[key]` as a string slot, or each `{type:'text'|…, text}` part of an array there. */
function contentSlots(holder: Dict, key: string, role: string, out: TextSlot[], partTypes: ReadonlySet<string>): void {
  const value = holder[key];
  if (typeof value === 'string') {
    out.push({ role, text: value, write: (t) => { holder[key] = t; } });
    return;
  }
  if (!Array.isArray(value)) return;
  for (const part of value) {
    if (!isDict(part)) continue;
    if (typeof part.text === 'string' && (part.type === undefined || partTypes.has(String(part.type)))) {
      out.push({ role, text: part.text, write: (t) => { part.text = t; } });
    } else if (part.type === 'tool_result') {
      // Anthropic tool results: a string or text blocks, the tool's words.
      contentSlots(part, 'content', 'tool', out, partTypes);
    }
  }
}

const CHAT_PARTS = new Set(['text']);
const MESSAGES_PARTS = new Set(['text']);
const RESPONSES_PARTS = new Set(['input_text', 'output_text', 'text']);

/** The text of a client request body (already parsed) for `route`; empty for route types without text. */
export function requestSlots(route: RouteType, body: Dict): TextSlot[] {
  const out: TextSlot[] = [];
  switch (route) {
    case 'Completions':
      for (const m of Array.isArray(body.messages) ? body.messages : []) if (isDict(m)) contentSlots(m, 'content', roleOf(m, 'user'), out, CHAT_PARTS);
      break;
    case 'Messages':
      contentSlots(body, 'system', 'system', out, MESSAGES_PARTS);
      for (const m of Array.isArray(body.messages) ? body.messages : []) if (isDict(m)) contentSlots(m, 'content', roleOf(m, 'user'), out, MESSAGES_PARTS);
      break;
    case 'Responses':
      contentSlots(body, 'instructions', 'system', out, RESPONSES_PARTS);
      if (typeof body.input === 'string') contentSlots(body, 'input', 'user', out, RESPONSES_PARTS);
      else for (const item of Array.isArray(body.input) ? body.input : []) {
        if (!isDict(item)) continue;
        if (item.type === 'function_call_output' || item.type === 'custom_tool_call_output') contentSlots(item, 'output', 'tool', out, RESPONSES_PARTS);
        else if (item.type === undefined || item.type === 'message') contentSlots(item, 'content', roleOf(item, 'user'), out, RESPONSES_PARTS);
      }
      break;
    case 'Embeddings':
      // `input` is a string or a list of strings; token-id arrays are not text and pass.
      if (typeof body.input === 'string') contentSlots(body, 'input', 'user', out, CHAT_PARTS);
      else if (Array.isArray(body.input)) {
        const list = body.input as unknown[];
        list.forEach((v, i) => { if (typeof v === 'string') out.push({ role: 'user', text: v, write: (t) => { list[i] = t; } }); });
      }
      break;
    default:
      break;
  }
  return out;
}

/** The text of a buffered answer in the client's format (Completions, Messages, Responses). */
export function responseSlots(route: RouteType, body: Dict): TextSlot[] {
  const out: TextSlot[] = [];
  switch (route) {
    case 'Completions':
      for (const c of Array.isArray(body.choices) ? body.choices : []) if (isDict(c) && isDict(c.message)) contentSlots(c.message, 'content', 'assistant', out, CHAT_PARTS);
      break;
    case 'Messages':
      contentSlots(body, 'content', 'assistant', out, MESSAGES_PARTS);
      break;
    case 'Responses':
      for (const item of Array.isArray(body.output) ? body.output : []) if (isDict(item) && item.type === 'message') contentSlots(item, 'content', 'assistant', out, RESPONSES_PARTS);
      // The SDK's `output_text` convenience field, when an answer carries it, says the same text again.
      if (typeof body.output_text === 'string') contentSlots(body, 'output_text', 'assistant', out, RESPONSES_PARTS);
      break;
    default:
      break;
  }
  return out;
}
