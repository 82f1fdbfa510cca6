/** The `/v1/models` answer, built from configuration: the provider's model (if pinned) and every alias. */

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

function modelIds(src: ModelsSource): string[] {
  const ids = new Set<string>();
  if (src.providerModel) ids.add(src.providerModel);
  for (const [alias, target] of Object.entries(src.aliases ?? {})) {
    ids.add(alias);
    ids.add(target);
  }
  return [...ids];
}

export function openAIModelList(src: ModelsSource): { object: 'list'; data: { id: string; object: 'model'; created: number; owned_by: string }[] } {
  return { object: 'list', data: modelIds(src).map((id) => ({ id, object: 'model', created: src.created, owned_by: src.ownedBy })) };
}

export function anthropicModelList(src: ModelsSource): {
  data: { type: 'model'; id: string; display_name: string; created_at: string }[]; has_more: false; first_id: string | null; last_id: string | null;
} {
  const ids = modelIds(src);
  const createdAt = new Date(src.created * 1000).toISOString();
  return {
    data: ids.map((id) => ({ type: 'model', id, display_name: id, created_at: createdAt })),
    has_more: false,
    first_id: ids[0] ?? null,
    last_id: ids.at(-1) ?? null,
  };
}
