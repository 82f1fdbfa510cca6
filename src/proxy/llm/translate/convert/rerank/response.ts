/**
 * Bedrock and Discovery Engine ranking answers → the Cohere-style answer rerank clients parse:
 * `{id, model, results: [{index, relevance_score, document?}]}`, best first.
 */
import type { RerankDocument, RerankRequest } from './request.ts';

export interface Ranked {
  /** Position of the document in the client's `documents`. */
  readonly index: number;
  readonly score: number;
}

export interface RerankResponse {
  id: string;
  model: string;
  results: { index: number; relevance_score: number; document?: RerankDocument | { text: string } }[];
}

/** Bedrock `{results: [{index, relevanceScore, document?}], nextToken?}`. */
export function readBedrockRerank(body: unknown, count: number): Ranked[] {
  const results = (body as { results?: unknown } | null)?.results;
  if (!Array.isArray(results)) throw new Error('no results array');
  return results.map((r: { index?: unknown; relevanceScore?: unknown }) => ranked(r.index, r.relevanceScore, count));
}

/** Discovery Engine `{records: [{id, score, title?, content?}]}`; ids are the positions the gateway sent. An empty answer may omit `records`. */
export function readVertexRank(body: unknown, count: number): Ranked[] {
  if (!body || typeof body !== 'object') throw new Error('not an object');
  const records = (body as { records?: unknown }).records ?? [];
  if (!Array.isArray(records)) throw new Error('records is not an array');
  return records.map((r: { id?: unknown; score?: unknown }) => ranked(typeof r.id === 'string' && /^\d+$/.test(r.id) ? Number(r.id) : undefined, r.score ?? 0, count));
}

function ranked(index: unknown, score: unknown, count: number): Ranked {
  if (!Number.isInteger(index) || (index as number) < 0 || (index as number) >= count) throw new Error(`result index ${String(index)} is not one of the documents`);
  if (typeof score !== 'number') throw new Error('score is not a number');
  return { index: index as number, score };
}

export function writeRerankResponse(ranked: readonly Ranked[], req: RerankRequest, model: string, id: string): RerankResponse {
  const sorted = [...ranked].sort((a, b) => b.score - a.score);
  const top = req.topN === undefined ? sorted : sorted.slice(0, req.topN);
  return {
    id,
    model,
    results: top.map((r) => {
      const doc = req.documents[r.index];
      return {
        index: r.index,
        relevance_score: r.score,
        ...(req.returnDocuments ? { document: typeof doc === 'string' ? { text: doc } : doc } : {}),
      };
    }),
  };
}
