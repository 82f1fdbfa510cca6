/**
 * Local token estimate for providers without a count endpoint (OpenAI-style providers, custom).
 * o200k_base (gpt-tokenizer) plus the chat framing overhead OpenAI documents; images get a flat
 * cost because their size is unknown without decoding them.
 *
 * The request is attacker input and BPE merging is quadratic in a pre-token's length, so the
 * work is bounded twice (token-pieces.ts):
 * - every text is cut into short pieces (exact pre-tokenizer boundaries, or a hard cut after
 *   MAX_PIECE_CHARS without one) before the tokenizer sees it; ordinary prose and JSON count
 *   exactly as one tokenizer call would, a long run without boundaries (base64, CJK, one repeated
 *   character) may count about one token more per MAX_PIECE_CHARS characters;
 * - the tokenizer's work per request is capped at COUNT_COST_BUDGET (stretchCost units, about
 *   one per character). Past it, the rest of the request is estimated from the tokens-per-character
 *   ratio of what was counted exactly (1/4 when nothing was). Prose reaches the budget after about
 *   55 KB of text (~13K tokens); this repository's docs (200 KB) then count within 2.5% of the
 *   exact figure. Measured worst case for the 2 MiB body limit (random words of any length, a run of
 *   one character, CJK, base64): tens of milliseconds of CPU instead of minutes.
 */
import { createRequire } from 'node:module';
import type * as GptTokenizer from 'gpt-tokenizer';
import type { Part, Request } from './canonical.ts';
import { forEachPiece } from './token-pieces.ts';

/** Tokenizer work per request counted exactly (stretchCost units, about one per character of prose). */
export const COUNT_COST_BUDGET = 65_536;
/** Tokens per character assumed when nothing was counted exactly. */
const DEFAULT_TOKENS_PER_CHAR = 0.25;

// The BPE tables cost ~25 MB of heap: load them on the first local estimate, not at startup
// (most deployments never need one). Node >= 22.12 can require() an ES module synchronously.
const load = createRequire(import.meta.url);
let tokenizer: typeof GptTokenizer | undefined;
/** Special tokens (`<|endoftext|>`) in a user's text are plain text, as the providers count them; the default throws. */
const PLAIN_TEXT = { disallowedSpecial: new Set<string>() };
function countChunk(text: string): number {
  tokenizer ??= load('gpt-tokenizer') as typeof GptTokenizer;
  return tokenizer.countTokens(text, PLAIN_TEXT);
}

/** Counts texts exactly while the request's tokenizer budget lasts, then by extrapolation. */
export class TokenTally {
  readonly #budget: number;
  #cost = 0;
  #exactTokens = 0;
  #exactChars = 0;
  #estimatedChars = 0;

  constructor(budget = COUNT_COST_BUDGET) {
    this.#budget = budget;
  }

  /** Adds one text; anything else (a field the client sent with another type) counts nothing. */
  add(text: unknown): void {
    if (typeof text !== 'string' || text.length === 0) return;
    if (this.#cost >= this.#budget) {
      this.#estimatedChars += text.length;
      return;
    }
    let counted = 0;
    forEachPiece(text, (piece) => {
      this.#exactTokens += countChunk(text.slice(piece.start, piece.end));
      this.#exactChars += piece.end - piece.start;
      this.#cost += piece.cost;
      counted = piece.end;
      return this.#cost < this.#budget;
    });
    this.#estimatedChars += text.length - counted;
  }

  /** Whether part of the total is an extrapolation. */
  get estimated(): boolean {
    return this.#estimatedChars > 0;
  }

  get tokens(): number {
    if (this.#estimatedChars === 0) return this.#exactTokens;
    const ratio = this.#exactChars > 0 ? this.#exactTokens / this.#exactChars : DEFAULT_TOKENS_PER_CHAR;
    return this.#exactTokens + Math.ceil(this.#estimatedChars * ratio);
  }
}

const PER_MESSAGE = 3;
const REPLY_PRIMING = 3;
const PER_IMAGE = 765;

/** Adds a part's texts to `tally`; returns its flat costs (images). */
function addPart(p: Part, tally: TokenTally): number {
  switch (p.type) {
    case 'text': tally.add(p.text); return 0;
    case 'image': return PER_IMAGE;
    case 'tool_call': tally.add(p.name); tally.add(p.arguments); return 0;
    case 'tool_result': return p.content.reduce((n, c) => {
      if (c.type === 'text') tally.add(c.text);
      return n + (c.type === 'text' ? 0 : PER_IMAGE);
    }, 0);
    case 'thinking': tally.add(p.text); return 0;
    case 'redacted_thinking': return 0;
    case 'web_search': return 0;
  }
}

export function estimateInputTokens(req: Request, budget = COUNT_COST_BUDGET): number {
  const tally = new TokenTally(budget);
  let n = REPLY_PRIMING;
  for (const s of req.system) {
    n += PER_MESSAGE;
    tally.add(s.text);
  }
  for (const m of req.messages) {
    n += PER_MESSAGE;
    for (const p of m.parts) n += addPart(p, tally);
  }
  for (const t of req.tools ?? []) {
    tally.add(t.name);
    tally.add(t.description ?? '');
    tally.add(JSON.stringify(t.parameters));
  }
  return n + tally.tokens;
}
