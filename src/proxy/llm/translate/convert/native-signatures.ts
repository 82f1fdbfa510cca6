/**
 * Signatures on native (untranslated) routes. A client that took an earlier turn through a
 * translated route holds gateway-marked signatures (`sb:g:…`, signatures.ts); sent as-is to the
 * vendor over a native route, they fail the whole request. The marks are found by a byte search
 * first (`hasMarkedSignature`), so a native request without them is forwarded untouched and
 * costs nothing more.
 */
import { readSignature } from './signatures.ts';

const MARK = Buffer.from('"sb:');
/** Thinking a translated route gave a Messages client without any signature (its vendor gave none). */
const UNSIGNED = [Buffer.from('"signature":""'), Buffer.from('"signature": ""')];

/**
 * Whether the body may hold a signature the vendor would refuse: a string starting with the
 * gateway's mark, or an empty signature.
 */
export function hasMarkedSignature(raw: Uint8Array): boolean {
  const bytes = Buffer.from(raw.buffer, raw.byteOffset, raw.byteLength);
  return bytes.indexOf(MARK) >= 0 || UNSIGNED.some((u) => bytes.indexOf(u) >= 0);
}

type Json = Record<string, unknown>;
const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * Messages requests to the Anthropic family: thinking blocks marked `sb:a:` are unwrapped; those
 * marked with another family, or with an empty signature, are dropped, as the translated writer
 * drops them. Returns the new `messages`, or undefined when nothing changed.
 */
export function nativeMessagesSignatures(messages: unknown): unknown[] | undefined {
  if (!Array.isArray(messages)) return undefined;
  let changed = false;
  const out = messages.map((m: unknown) => {
    if (!isObject(m) || !Array.isArray(m.content)) return m;
    const content: unknown[] = [];
    let touched = false;
    for (const block of m.content as unknown[]) {
      if (isObject(block) && block.type === 'thinking' && typeof block.signature === 'string') {
        const { signature, family } = readSignature(block.signature, 'anthropic');
        if (family !== 'anthropic' || signature === '') {
          touched = true;
          continue;
        }
        if (signature !== block.signature) {
          touched = true;
          content.push({ ...block, signature });
          continue;
        }
      }
      content.push(block);
    }
    if (!touched) return m;
    changed = true;
    return { ...m, content };
  });
  return changed ? out : undefined;
}

/**
 * Responses requests to OpenAI: reasoning items whose `encrypted_content` is marked `sb:o:` are
 * unwrapped; reasoning items marked with another family are dropped whole (their ids name no
 * OpenAI state either). Returns the new `input`, or undefined when nothing changed.
 */
export function nativeResponsesSignatures(input: unknown): unknown[] | undefined {
  if (!Array.isArray(input)) return undefined;
  let changed = false;
  const out: unknown[] = [];
  for (const item of input as unknown[]) {
    if (isObject(item) && item.type === 'reasoning' && typeof item.encrypted_content === 'string') {
      const { signature, family } = readSignature(item.encrypted_content, 'openai');
      if (family !== 'openai') {
        changed = true;
        continue;
      }
      if (signature !== item.encrypted_content) {
        changed = true;
        out.push({ ...item, encrypted_content: signature });
        continue;
      }
    }
    out.push(item);
  }
  return changed ? out : undefined;
}
