/**
 * The Cohere/Jina-style rerank request our Rerank route accepts (`{model, query, documents,
 * top_n, return_documents}`), read into a neutral shape and written as Bedrock Agent Runtime's
 * `Rerank` body or Discovery Engine's `rank` body.
 */
import { TranslationError } from '../../errors.ts';

/** One document as the client sent it: a string, or an object (Cohere v1 / Jina allow `{text}` objects). */
export type RerankDocument = string | Readonly<Record<string, unknown>>;

export interface RerankRequest {
  readonly query: string;
  readonly documents: readonly RerankDocument[];
  /** How many results the client wants; undefined means all of them. */
  readonly topN?: number;
  readonly returnDocuments: boolean;
}

/** Fields a rerank client may send that neither cloud API can honour: refused rather than dropped. */
const UNSUPPORTED = ['rank_fields', 'max_tokens_per_doc', 'max_chunks_per_doc'] as const;

export function readRerankRequest(body: Readonly<Record<string, unknown>>): RerankRequest {
  const { query, documents, top_n: topN, return_documents: returnDocuments } = body;
  if (typeof query !== 'string' || query === '') throw new TranslationError('`query` must be a non-empty string', 400, 'query');
  if (!Array.isArray(documents) || documents.length === 0) throw new TranslationError('`documents` must be a non-empty array', 400, 'documents');
  for (const [i, d] of documents.entries()) {
    if (typeof d !== 'string' && (d === null || typeof d !== 'object' || Array.isArray(d))) {
      throw new TranslationError(`documents[${i}] must be a string or an object`, 400, 'documents');
    }
  }
  if (topN !== undefined && topN !== null && !(Number.isInteger(topN) && (topN as number) > 0)) throw new TranslationError('`top_n` must be a positive integer', 400, 'top_n');
  for (const field of UNSUPPORTED) {
    if (body[field] !== undefined && body[field] !== null) throw new TranslationError(`\`${field}\` is not supported by this provider's rerank API`, 400, field);
  }
  return {
    query,
    documents: documents as RerankDocument[],
    ...(typeof topN === 'number' ? { topN: Math.min(topN, documents.length) } : {}),
    returnDocuments: returnDocuments === true,
  };
}

/** The text a ranking API scores for a document: the string, an object's `text`, or the object as JSON. */
export function documentText(d: RerankDocument): string {
  if (typeof d === 'string') return d;
  return typeof d.text === 'string' ? d.text : JSON.stringify(d);
}

/** Bedrock's ARN for a foundation model id; an ARN (inference profile, provisioned model) is used as it is. */
export function bedrockModelArn(model: string, region: string): string {
  return model.startsWith('arn:') ? model : `arn:aws:bedrock:${region}::foundation-model/${model}`;
}

/**
 * Bedrock Agent Runtime `POST /rerank`: one text query, every document an inline source (text,
 * or a JSON document for objects other than `{text}`), `numberOfResults` = top_n or all.
 */
export function writeBedrockRerank(req: RerankRequest, modelArn: string): Record<string, unknown> {
  return {
    queries: [{ type: 'TEXT', textQuery: { text: req.query } }],
    sources: req.documents.map((d) => ({ type: 'INLINE', inlineDocumentSource: bedrockDocument(d) })),
    rerankingConfiguration: {
      type: 'BEDROCK_RERANKING_MODEL',
      bedrockRerankingConfiguration: {
        numberOfResults: req.topN ?? req.documents.length,
        modelConfiguration: { modelArn },
      },
    },
  };
}

function bedrockDocument(d: RerankDocument): Record<string, unknown> {
  if (typeof d === 'string') return { type: 'TEXT', textDocument: { text: d } };
  const keys = Object.keys(d);
  if (keys.length === 1 && typeof d.text === 'string') return { type: 'TEXT', textDocument: { text: d.text } };
  return { type: 'JSON', jsonDocument: d };
}

/**
 * Discovery Engine `rankingConfigs/default_ranking_config:rank`: records carry the document's
 * position as their id (the answer is matched back by it); a `title` on an object document is
 * kept as the record's title. Record details are not asked back: the gateway still has them.
 */
export function writeVertexRank(req: RerankRequest, model: string): Record<string, unknown> {
  return {
    model,
    query: req.query,
    records: req.documents.map((d, i) => ({
      id: String(i),
      ...(typeof d === 'object' && typeof d.title === 'string' ? { title: d.title } : {}),
      content: documentText(d),
    })),
    ...(req.topN !== undefined ? { topN: req.topN } : {}),
    ignoreRecordDetailsInResponse: true,
  };
}
