/**
 * OpenAI embeddings ↔ Bedrock InvokeModel bodies of the two text-embedding families Bedrock
 * serves: Amazon Titan (one `inputText` per call) and Cohere Embed (`texts[]` + `input_type`).
 *
 * Titan and an input array: a request with more than one text is refused (400), not fanned out.
 * The gateway sends one upstream request per attempt — signing, failover to the next provider,
 * the retry decision on 429/5xx and usage accounting all hang on that one exchange — and a
 * fan-out would turn one client request into N billed calls whose partial failure (text 3 of 8
 * throttled) has no honest OpenAI answer. Clients that embed batches on Bedrock can use a
 * Cohere model (up to 96 texts per call) or send one text per request.
 */
import { TranslationError } from '../../errors.ts';
import type { EmbeddingsResponse } from '../../formats/embeddings.ts';
import { makeUsage, type Usage } from '../../usage.ts';

export type BedrockEmbeddingFamily = 'titan' | 'cohere';

/**
 * The embedding family of a Bedrock model id (cross-region inference profile prefixes such as
 * `us.` and ARNs of foundation models included), or undefined for models without a text
 * embeddings translation.
 */
export function bedrockEmbeddingFamily(model: string): BedrockEmbeddingFamily | undefined {
  const id = model.replace(/^arn:aws[a-z-]*:bedrock:[^:]*:[^:]*:(foundation-model|inference-profile)\//, '').replace(/^(us|eu|apac|us-gov|jp|au|ca|global)\./, '');
  if (/^amazon\.titan-embed-(text-v\d|g1-text)/.test(id)) return 'titan';
  if (/^cohere\.embed-/.test(id)) return 'cohere';
  return undefined;
}

export interface EmbeddingsRead {
  readonly texts: readonly string[];
  readonly base64: boolean;
}

/** The OpenAI `input` as texts (token-id arrays cannot be expressed on Bedrock). */
export function readEmbeddingsInput(body: Readonly<Record<string, unknown>>): EmbeddingsRead {
  const { input, encoding_format: encoding } = body;
  let texts: string[];
  if (typeof input === 'string') texts = [input];
  else if (Array.isArray(input) && input.length > 0 && input.every((x) => typeof x === 'string')) texts = input as string[];
  else if (Array.isArray(input) && input.length > 0 && input.every((x) => typeof x === 'number' || Array.isArray(x))) {
    throw new TranslationError('token-id input is not supported by Bedrock embedding models; send text', 400, 'input');
  } else throw new TranslationError('`input` must be a string or a non-empty array of strings', 400, 'input');
  if (encoding !== undefined && encoding !== 'float' && encoding !== 'base64') throw new TranslationError('`encoding_format` must be "float" or "base64"', 400, 'encoding_format');
  return { texts, base64: encoding === 'base64' };
}

/** Titan text embeddings: `{inputText, dimensions?, normalize?}` (v2 takes dimensions 256/512/1024; v1 takes inputText only). */
export function writeTitanEmbeddings(read: EmbeddingsRead, body: Readonly<Record<string, unknown>>, model: string): Record<string, unknown> {
  if (read.texts.length !== 1) {
    throw new TranslationError(`${model} embeds one text per request and the gateway does not split batches: send one input per request, or use a Cohere embed model`, 400, 'input');
  }
  return {
    inputText: read.texts[0],
    ...(typeof body.dimensions === 'number' ? { dimensions: body.dimensions } : {}),
    ...(typeof body.normalize === 'boolean' ? { normalize: body.normalize } : {}),
  };
}

const INPUT_TYPES = new Set(['search_document', 'search_query', 'classification', 'clustering']);

/**
 * Cohere Embed: `{texts, input_type, truncate?, output_dimension?}`. OpenAI has no `input_type`;
 * a client may send Cohere's as an extra body field, else `search_document` (the type for
 * corpus text; queries should say `search_query`).
 */
export function writeCohereEmbeddings(read: EmbeddingsRead, body: Readonly<Record<string, unknown>>): Record<string, unknown> {
  const inputType = body.input_type ?? 'search_document';
  if (typeof inputType !== 'string' || !INPUT_TYPES.has(inputType)) throw new TranslationError('`input_type` must be one of search_document, search_query, classification, clustering', 400, 'input_type');
  return {
    texts: read.texts,
    input_type: inputType,
    ...(typeof body.truncate === 'string' ? { truncate: body.truncate } : {}),
    ...(typeof body.dimensions === 'number' ? { output_dimension: body.dimensions } : {}),
  };
}

type Headers = Readonly<Record<string, string | string[] | undefined>>;

/** InvokeModel reports input tokens in a response header for every family. */
function headerTokens(headers: Headers): number | undefined {
  const v = headers['x-amzn-bedrock-input-token-count'];
  const n = Number(Array.isArray(v) ? v[0] : v);
  return v !== undefined && Number.isFinite(n) ? n : undefined;
}

/** Titan `{embedding, inputTextTokenCount, embeddingsByType?}` → one vector and its token count. */
export function readTitanEmbeddings(body: unknown, headers: Headers): { vectors: number[][]; inputTokens: number } {
  const b = body as { embedding?: unknown; embeddingsByType?: { float?: unknown }; inputTextTokenCount?: unknown } | null;
  const vector = b?.embedding ?? b?.embeddingsByType?.float;
  if (!isVector(vector)) throw new Error('no embedding');
  const inputTokens = typeof b?.inputTextTokenCount === 'number' ? b.inputTextTokenCount : headerTokens(headers) ?? 0;
  return { vectors: [vector], inputTokens };
}

/**
 * Cohere `{embeddings: number[][]}` (response_type `embeddings_floats`) or
 * `{embeddings: {float: number[][]}}` (`embeddings_by_type`); tokens from the response header,
 * else Cohere's `meta.billed_units.input_tokens`.
 */
export function readCohereEmbeddings(body: unknown, headers: Headers, count: number): { vectors: number[][]; inputTokens: number } {
  const b = body as { embeddings?: unknown; meta?: { billed_units?: { input_tokens?: unknown } } } | null;
  const raw = b?.embeddings;
  const vectors = Array.isArray(raw) ? raw : (raw as { float?: unknown } | undefined)?.float;
  if (!Array.isArray(vectors) || !vectors.every(isVector)) throw new Error('no float embeddings');
  if (vectors.length !== count) throw new Error(`${vectors.length} embeddings for ${count} texts`);
  const billed = b?.meta?.billed_units?.input_tokens;
  return { vectors, inputTokens: headerTokens(headers) ?? (typeof billed === 'number' ? billed : 0) };
}

function isVector(v: unknown): v is number[] {
  return Array.isArray(v) && v.every((x) => typeof x === 'number');
}

/** OpenAI's base64 encoding: the vector's float32 values, little-endian, base64. */
export function float32Base64(vector: readonly number[]): string {
  const buf = Buffer.allocUnsafe(vector.length * 4);
  for (let i = 0; i < vector.length; i++) buf.writeFloatLE(vector[i], i * 4);
  return buf.toString('base64');
}

export function writeEmbeddingsResponse(vectors: readonly number[][], inputTokens: number, model: string, base64: boolean): { body: EmbeddingsResponse; usage: Usage } {
  return {
    body: {
      object: 'list',
      data: vectors.map((v, index) => ({ object: 'embedding', index, embedding: base64 ? float32Base64(v) : v })),
      model,
      usage: { prompt_tokens: inputTokens, total_tokens: inputTokens },
    },
    usage: makeUsage({ inputTokens, outputTokens: 0 }),
  };
}
