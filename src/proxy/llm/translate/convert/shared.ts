/** Small helpers every converter needs. */
import type { ImageSource, Part } from '../canonical.ts';
import { TranslationError } from '../errors.ts';

/** `data:image/png;base64,AAAA` → base64 source; anything else is a URL. */
export function imageFromUrl(url: string): ImageSource {
  const m = /^data:([^;,]+);base64,(.*)$/s.exec(url);
  if (m) return { kind: 'base64', mediaType: m[1], data: m[2] };
  return { kind: 'url', url };
}

export function imageToUrl(src: ImageSource): string {
  return src.kind === 'url' ? src.url : `data:${src.mediaType};base64,${src.data}`;
}

/** Tool arguments travel as JSON text in OpenAI formats and as objects elsewhere. */
export function parseArguments(args: string): Record<string, unknown> {
  if (args.trim() === '') return {};
  try {
    const v: unknown = JSON.parse(args);
    if (v && typeof v === 'object' && !Array.isArray(v)) return v as Record<string, unknown>;
  } catch {
    // fall through: models sometimes produce invalid JSON; keep it visible rather than dropping it
  }
  return { _raw_arguments: args };
}

export function stringifyArguments(input: unknown): string {
  return input === undefined ? '{}' : JSON.stringify(input);
}

export function toolResultText(parts: readonly Part[] | Extract<Part, { type: 'tool_result' }>['content']): string {
  return parts.map((p) => (p.type === 'text' ? p.text : '')).join('');
}

export function asArray<T>(v: T | readonly T[] | undefined): readonly T[] {
  if (v === undefined) return [];
  return Array.isArray(v) ? (v as readonly T[]) : [v as T];
}

export function requireObject(body: unknown): Record<string, unknown> {
  if (!body || typeof body !== 'object' || Array.isArray(body)) throw new TranslationError('request body must be a JSON object');
  return body as Record<string, unknown>;
}

/**
 * Drops undefined members so written bodies stay minimal and fixtures stable. Copies rather than
 * `delete`s: a deleted property turns the object into a slow dictionary, and JSON.stringify of
 * the written body then costs several times more.
 */
export function compact<T extends Record<string, unknown>>(o: T): T {
  const out: Record<string, unknown> = {};
  for (const k in o) if (o[k] !== undefined) out[k] = o[k];
  return out as T;
}

const EFFORT_BUDGET = { minimal: 1024, low: 2048, medium: 8192, high: 24576 } as const;

/** Providers that take a token budget get one derived from an OpenAI-style effort. */
export function effortToBudget(effort: keyof typeof EFFORT_BUDGET): number {
  return EFFORT_BUDGET[effort];
}
