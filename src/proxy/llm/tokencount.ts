/**
 * Local token estimate for providers without a count endpoint (OpenAI-style providers, custom).
 * o200k_base (gpt-tokenizer) plus the chat framing overhead OpenAI documents; images get a flat
 * cost because their size is unknown without decoding them.
 */
import { createRequire } from 'node:module';
import type * as GptTokenizer from 'gpt-tokenizer';

// The BPE tables cost ~25 MB of heap: load them on the first local estimate, not at startup
// (most deployments never need one). Node >= 22.12 can require() an ES module synchronously.
const load = createRequire(import.meta.url);
let tokenizer: typeof GptTokenizer | undefined;
function countTokens(text: string): number {
  tokenizer ??= load('gpt-tokenizer') as typeof GptTokenizer;
  return tokenizer.countTokens(text);
}
import type { Part, Request } from './canonical.ts';

const PER_MESSAGE = 3;
const REPLY_PRIMING = 3;
const PER_IMAGE = 765;

function partTokens(p: Part): number {
  switch (p.type) {
    case 'text': return countTokens(p.text);
    case 'image': return PER_IMAGE;
    case 'tool_call': return countTokens(p.name) + countTokens(p.arguments);
    case 'tool_result': return p.content.reduce((n, c) => n + (c.type === 'text' ? countTokens(c.text) : PER_IMAGE), 0);
    case 'thinking': return countTokens(p.text);
    case 'redacted_thinking': return 0;
    case 'web_search': return 0;
  }
}

export function estimateInputTokens(req: Request): number {
  let n = REPLY_PRIMING;
  for (const s of req.system) n += PER_MESSAGE + countTokens(s.text);
  for (const m of req.messages) n += PER_MESSAGE + m.parts.reduce((sum, p) => sum + partTokens(p), 0);
  for (const t of req.tools ?? []) n += countTokens(t.name) + countTokens(t.description ?? '') + countTokens(JSON.stringify(t.parameters));
  return n;
}
