/**
 * Reasoning signatures across vendors. A signature is opaque state only the vendor family that
 * produced it can verify: Anthropic and Bedrock (Claude) accept each other's, Gemini checks its
 * `thoughtSignature`s, OpenAI its `encrypted_content`. When a translated route hands a signature
 * to a client, the gateway prefixes it with the producing family (`sb:a:`, `sb:g:`, `sb:o:`);
 * when the client sends it back, the prefix is read and removed, and a writer replays the
 * signature only to its own family. Vendor signatures are base64, which never contains `:`, so
 * the prefix cannot collide with one.
 *
 * The client format's own family is never marked: an Anthropic-family signature given to a
 * Messages client stays byte-identical, because the next turn of that conversation may go to
 * Anthropic over a native (untranslated) route. For the same reason an unmarked signature is
 * taken to belong to the vendor whose convention the field follows (Messages `signature` and chat
 * `thinking_blocks`: Anthropic; chat `extra_content.google`: Gemini; Responses
 * `encrypted_content`: OpenAI): that is where a client talking to the vendor directly got it.
 */
import type { Part, SignatureFamily } from '../canonical.ts';

const CODE: Readonly<Record<SignatureFamily, string>> = { anthropic: 'a', gemini: 'g', openai: 'o' };
const FAMILY: Readonly<Record<string, SignatureFamily>> = { a: 'anthropic', g: 'gemini', o: 'openai' };

/** The prefix the gateway puts on a signature of `family`. */
export function signaturePrefix(family: SignatureFamily): string {
  return `sb:${CODE[family]}:`;
}

/**
 * A signature as a client receives it: prefixed with its family unless that family is the client
 * format's own (`native`), or the family is unknown.
 */
export function markSignature(signature: string, family: SignatureFamily | undefined, native: SignatureFamily | undefined): string {
  return family === undefined || family === native || signature === '' ? signature : `sb:${CODE[family]}:${signature}`;
}

/** A signature as a client sent it: the gateway's prefix removed, or the field's own family presumed. */
export function readSignature(raw: string, presumed: SignatureFamily): { signature: string; family: SignatureFamily } {
  // Checked by character, not with a regex: this runs for every signed block of every request.
  if (raw.length > 5 && raw.charCodeAt(0) === 115 /* s */ && raw.charCodeAt(1) === 98 /* b */ && raw[2] === ':' && raw[4] === ':') {
    const family = FAMILY[raw[3]];
    if (family) return { signature: raw.slice(5), family };
  }
  return { signature: raw, family: presumed };
}

/** A canonical thinking part read from a client, with its signature unwrapped. */
export function clientThinking(text: string, rawSignature: string | undefined, presumed: SignatureFamily): Extract<Part, { type: 'thinking' }> {
  if (!rawSignature) return { type: 'thinking', text };
  const { signature, family } = readSignature(rawSignature, presumed);
  return { type: 'thinking', text, signature, family };
}

/**
 * The signature a writer for `target` may replay, or undefined when it belongs to another family
 * (the target would reject the whole request with an invalid-signature error).
 */
export function replayableSignature(p: Extract<Part, { type: 'thinking' }>, target: SignatureFamily): string | undefined {
  if (!p.signature) return undefined;
  return p.family === undefined || p.family === target ? p.signature : undefined;
}
