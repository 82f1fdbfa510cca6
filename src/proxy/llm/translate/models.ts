/**
 * The `/v1/models` answer, built from configuration: each provider's model (if pinned) and every
 * alias. A priority group answers the union of its providers' models (docs/llm.md), in the group's
 * order, each id once (its first provider owns it): the same list whichever provider of the group
 * the rotation picked for this call.
 */

export interface ModelsSource {
  /** The provider's configured model, when it pins one. */
  readonly providerModel?: string;
  /** Friendly name → provider model (`ai.modelAliases`). */
  readonly aliases?: Readonly<Record<string, string>>;
  /** Who owns the models, for OpenAI's `owned_by`. */
  readonly ownedBy: string;
  /** Unix seconds used for `created`/`created_at` (the config's age; the gateway does not know the model's). */
  readonly created: number;
}

interface ModelEntry { readonly id: string; readonly ownedBy: string; readonly created: number }

function modelEntries(sources: ModelsSource | readonly ModelsSource[]): ModelEntry[] {
  const seen = new Map<string, ModelEntry>();
  const add = (id: string, src: ModelsSource) => {
    if (!seen.has(id)) seen.set(id, { id, ownedBy: src.ownedBy, created: src.created });
  };
  for (const src of Array.isArray(sources) ? (sources as readonly ModelsSource[]) : [sources as ModelsSource]) {
    if (src.providerModel) add(src.providerModel, src);
    for (const [alias, target] of Object.entries(src.aliases ?? {})) {
      add(alias, src);
      add(target, src);
    }
  }
  return [...seen.values()];
}

export function openAIModelList(sources: ModelsSource | readonly ModelsSource[]): { object: 'list'; data: { id: string; object: 'model'; created: number; owned_by: string }[] } {
  return { object: 'list', data: modelEntries(sources).map((m) => ({ id: m.id, object: 'model', created: m.created, owned_by: m.ownedBy })) };
}

export function anthropicModelList(sources: ModelsSource | readonly ModelsSource[]): {
  data: { type: 'model'; id: string; display_name: string; created_at: string }[]; has_more: false; first_id: string | null; last_id: string | null;
} {
  const entries = modelEntries(sources);
  return {
    data: entries.map((m) => ({ type: 'model', id: m.id, display_name: m.id, created_at: new Date(m.created * 1000).toISOString() })),
    has_more: false,
    first_id: entries[0]?.id ?? null,
    last_id: entries.at(-1)?.id ?? null,
  };
}
