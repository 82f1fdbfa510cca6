/**
 * `GET /v1/models` on a models rule (ProxyModels, docs/models.md), computed once per config: the
 * Public models a client can name exactly, plus every entry of the Gateway's model catalog
 * (AiBackendIR.catalog) whose id a client could request — the same choice `ModelRouter.choose`
 * makes (most specific Public match; an id only an Internal model matches is not listed) — sorted
 * by id, with the catalog's metadata where it has the id. OpenAI's list and Anthropic's page.
 */
import { selectModel } from '../../../common/model-match.ts';
import type { ModelCatalogEntryIR, ModelRouteIR } from '../../../ir/ai.ts';

export interface CatalogAnswers { readonly openai: Uint8Array; readonly anthropic: Uint8Array }

export function catalogAnswers(models: readonly ModelRouteIR[], catalog: readonly ModelCatalogEntryIR[] = []): CatalogAnswers {
  const listed = new Map<string, ModelCatalogEntryIR>();
  for (const m of models) if (m.visibility === 'Public' && m.pattern.kind === 'exact') listed.set(m.pattern.name, { id: m.pattern.name });
  for (const entry of catalog) {
    if (listed.has(entry.id) || selectModel(models, entry.id) !== undefined) listed.set(entry.id, entry);
  }
  const entries = [...listed.values()].sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  const openai = { object: 'list', data: entries.map((e) => ({ id: e.id, object: 'model', created: e.created ?? 0, owned_by: e.ownedBy ?? 'switchboard' })) };
  const anthropic = {
    data: entries.map((e) => ({ type: 'model', id: e.id, display_name: e.displayName ?? e.id, created_at: new Date((e.created ?? 0) * 1000).toISOString().replace('.000Z', 'Z') })),
    has_more: false, first_id: entries[0]?.id ?? null, last_id: entries.at(-1)?.id ?? null,
  };
  return { openai: Buffer.from(JSON.stringify(openai)), anthropic: Buffer.from(JSON.stringify(anthropic)) };
}
