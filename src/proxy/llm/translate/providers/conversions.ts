/**
 * Body conversions for the non-generation routes a provider serves through an API of its own
 * shape: rerank on Bedrock Agent Runtime and Discovery Engine, embeddings on Bedrock InvokeModel.
 * A provider module hands one back in its endpoint; the facade sends the prepared body and reads
 * a 2xx answer with the same preparation (it remembers the documents, the encoding …).
 */
import type { TranslationContext } from '../context.ts';
import { parseUpstreamError, renderError, type ErrorFormat } from '../errors.ts';
import { jsonTooDeep } from '../../../http/json-depth.ts';
import type { ForwardPlan, UpstreamRequest } from '../plan.ts';
import type { UpstreamFormat } from './types.ts';
import {
  bedrockEmbeddingFamily, readCohereEmbeddings, readEmbeddingsInput, readTitanEmbeddings, writeCohereEmbeddings,
  writeEmbeddingsResponse, writeTitanEmbeddings,
} from '../convert/embeddings/bedrock.ts';
import { bedrockModelArn, readRerankRequest, writeBedrockRerank, writeVertexRank } from '../convert/rerank/request.ts';
import { readBedrockRerank, readVertexRank, writeRerankResponse } from '../convert/rerank/response.ts';
import type { Usage } from '../usage.ts';

export type ResponseHeaders = Readonly<Record<string, string | string[] | undefined>>;

export interface PreparedConversion {
  /** The upstream request body. */
  readonly body: Record<string, unknown>;
  /** A parsed 2xx upstream body → the client's body and usage; throws when the body is not the expected shape. */
  read(response: unknown, headers: ResponseHeaders): { body: unknown; usage?: Usage };
}

export interface BodyConversion {
  /** The client format (for logs and the plan's `clientFormat`). */
  readonly client: 'rerank' | 'embeddings';
  /** Client body (with `model` resolved by the facade) → upstream body; throws TranslationError for what cannot be expressed. */
  prepare(body: Readonly<Record<string, unknown>>, model: string, ctx: TranslationContext): PreparedConversion;
}

/** Cohere-style rerank → Bedrock Agent Runtime `Rerank` (model as a foundation-model ARN in `region`). */
export function bedrockRerank(region: string): BodyConversion {
  return {
    client: 'rerank',
    prepare(body, model, ctx) {
      const req = readRerankRequest(body);
      return {
        body: writeBedrockRerank(req, bedrockModelArn(model, region)),
        read: (res) => ({ body: writeRerankResponse(readBedrockRerank(res, req.documents.length), req, model, ctx.newId('rerank-')) }),
      };
    },
  };
}

/** Cohere-style rerank → Discovery Engine `rank` (Vertex AI ranking API). */
export const vertexRank: BodyConversion = {
  client: 'rerank',
  prepare(body, model, ctx) {
    const req = readRerankRequest(body);
    return {
      body: writeVertexRank(req, model),
      read: (res) => ({ body: writeRerankResponse(readVertexRank(res, req.documents.length), req, model, ctx.newId('rerank-')) }),
    };
  },
};

/** OpenAI embeddings → Bedrock InvokeModel for Titan or Cohere Embed; undefined for other model families. */
export function bedrockEmbeddings(model: string): BodyConversion | undefined {
  const family = bedrockEmbeddingFamily(model);
  if (!family) return undefined;
  return {
    client: 'embeddings',
    prepare(body, resolved) {
      const read = readEmbeddingsInput(body);
      const upstream = family === 'titan' ? writeTitanEmbeddings(read, body, resolved) : writeCohereEmbeddings(read, body);
      return {
        body: upstream,
        read(res, headers) {
          const got = family === 'titan' ? readTitanEmbeddings(res, headers) : readCohereEmbeddings(res, headers, read.texts.length);
          return writeEmbeddingsResponse(got.vectors, got.inputTokens, resolved, read.base64);
        },
      };
    },
  };
}

/**
 * The facade's plan for a converted route: the prepared body to `upstream`, a non-2xx answer
 * re-rendered in the client's error format with its status kept, a 2xx answer read back (502 when
 * it is not the shape the provider documents). These routes never stream.
 */
export function conversionPlan(
  conversion: BodyConversion, format: UpstreamFormat, upstream: Omit<UpstreamRequest, 'body'>,
  body: Readonly<Record<string, unknown>>, model: string, errorFormat: ErrorFormat, ctx: TranslationContext,
): ForwardPlan {
  const prepared = conversion.prepare(body, model, ctx);
  return {
    kind: 'forward',
    upstream: { ...upstream, body: Buffer.from(JSON.stringify(prepared.body)) },
    model, stream: false, clientFormat: conversion.client, upstreamFormat: format, streamHeaders: {},
    translateResponse: (status, headers, resBody) => {
      if (status >= 300) return renderError(parseUpstreamError(status, resBody, headers), errorFormat);
      let out;
      try {
        // The reader and JSON.stringify below recurse: a deep answer is refused before them.
        if (jsonTooDeep(resBody)) throw new Error('too deep');
        out = prepared.read(JSON.parse(Buffer.from(resBody).toString('utf8')), headers);
      } catch {
        return renderError({ status: 502, message: `upstream returned a body that is not a valid ${format} response` }, errorFormat);
      }
      return { status, headers: { 'content-type': 'application/json' }, body: Buffer.from(JSON.stringify(out.body)), usage: out.usage };
    },
    createStreamTranslator: () => { throw new Error(`${format} does not stream`); },
  };
}
