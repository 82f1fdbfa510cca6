/** Fixture loading shared by the matrix and SDK tests (test-only: nothing outside `*.test.ts` imports `testing/`). */
import { readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse, stringify } from 'yaml';
import type { LLMProvider } from '../config.ts';
import { encodeEventStreamMessage } from '../stream/eventstream.ts';
import type { ClientRoute } from './client-requests.ts';

export const FIXTURES = join(import.meta.dirname, '../../../../../test/fixtures/llm');
export const UPDATE = process.env.UPDATE_FIXTURES === '1';

export function loadProviders(): Record<string, LLMProvider> {
  return parse(readFileSync(join(FIXTURES, 'providers.yaml'), 'utf8')) as Record<string, LLMProvider>;
}

export interface FixtureFile<T> { readonly name: string; readonly path: string; readonly data: T }

export function loadFixtures<T>(dir: string): FixtureFile<T>[] {
  const full = join(FIXTURES, dir);
  return readdirSync(full).filter((f) => f.endsWith('.yaml')).sort().map((f) => ({
    name: f.replace(/\.yaml$/, ''),
    path: join(full, f),
    data: parse(readFileSync(join(full, f), 'utf8')) as T,
  }));
}

export function saveFixture(path: string, data: unknown): void {
  writeFileSync(path, stringify(data, { lineWidth: 0, blockQuote: 'literal', aliasDuplicateObjects: false }));
}

/** Body bytes as JSON when they parse, text otherwise: readable in YAML diffs. */
export function bodyValue(bytes: Uint8Array): unknown {
  const text = Buffer.from(bytes).toString('utf8');
  try { return JSON.parse(text); } catch { return text; }
}

/** Splits bytes into chunks of `size` (0 = one chunk) and runs them through `push`, then `end`. */
export function feed(push: (c: Uint8Array) => Uint8Array[], end: () => Uint8Array[], input: Uint8Array, size: number): string {
  const out: Uint8Array[] = [];
  const step = size === 0 ? Math.max(1, input.length) : size;
  for (let i = 0; i < input.length; i += step) out.push(...push(input.subarray(i, i + step)));
  out.push(...end());
  return Buffer.concat(out).toString('utf8');
}

/** A recorded-shape provider answer: JSON body, SSE text, or Bedrock event-stream frames. */
export interface UpstreamFixture {
  provider: string;
  /** Client routes this fixture applies to (default: all three). */
  routes?: ClientRoute[];
  upstream: {
    status?: number;
    headers?: Record<string, string>;
    body?: unknown;
    sse?: string;
    eventstream?: { event?: string; exception?: string; payload: unknown }[];
  };
  expect?: Record<string, unknown>;
}

export function upstreamStreamBytes(up: UpstreamFixture['upstream']): Uint8Array {
  if (up.sse !== undefined) return Buffer.from(up.sse);
  return Buffer.concat((up.eventstream ?? []).map((e) => (e.exception
    ? encodeEventStreamMessage(e.exception, e.payload, 'exception')
    : encodeEventStreamMessage(e.event ?? '', e.payload))));
}
