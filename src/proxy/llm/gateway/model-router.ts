/**
 * Route by model (ProxyModel, docs/models.md): an `ai` backend with `models` chooses, per request,
 * the entry whose pattern the body's `model` matches (most specific first: the translator ordered
 * them, src/common/model-match.ts), and that entry's priority groups are what the usual picker,
 * failover and provider health work over — or, for weighted and conditional virtual models and
 * models with their own authorization, what model-choice.ts makes of them. Only backends with
 * `models` build one, so plain `ai` backends pay nothing.
 */
import { selectModel } from '../../../common/model-match.ts';
import type { ModelCatalogEntryIR, ModelRouteIR } from '../../../ir/ai.ts';
import { CompiledModel, type CelInputSource } from './model-choice.ts';
import { catalogAnswers } from './models-catalog.ts';
import type { ProviderPicker } from './picker.ts';
import type { ProviderHealth } from './provider-health.ts';

export type ModelChoice =
  | { readonly kind: 'picked'; readonly picker: ProviderPicker }
  | { readonly kind: 'no-model' }
  | { readonly kind: 'unknown'; readonly model: string }
  /** The model's `policies.authorization` refused the request (403 forbidden). */
  | { readonly kind: 'denied'; readonly model: string }
  /** A conditional virtual model whose conditions all failed and that has no fallback. */
  | { readonly kind: 'no-target'; readonly model: string };

export class ModelRouter {
  readonly #models: readonly ModelRouteIR[];
  readonly #compiled: Map<ModelRouteIR, CompiledModel>;
  /** `/v1/models` answers, computed once: OpenAI's list and Anthropic's page. */
  readonly #catalog: { readonly openai: Uint8Array; readonly anthropic: Uint8Array };

  /** `random` draws weighted virtual models' targets (tests pass a seeded one); `catalog`: the Gateway's model catalog (models-catalog.ts). */
  constructor(models: readonly ModelRouteIR[], health: ProviderHealth | undefined, random: () => number = Math.random, catalog: readonly ModelCatalogEntryIR[] = []) {
    this.#models = models;
    this.#compiled = new Map(models.map((m) => [m, new CompiledModel(m, health, random)]));
    this.#catalog = catalogAnswers(models, catalog);
  }

  /**
   * The `/v1/models` answer: the Public models a client can name exactly and the catalog entries
   * a client could request, sorted by name (models-catalog.ts). Anthropic's shape when the client
   * sent `anthropic-version`.
   */
  catalog(anthropic: boolean): Uint8Array {
    return anthropic ? this.#catalog.anthropic : this.#catalog.openai;
  }

  /**
   * The picker for the request's model; a body that is not JSON or has no string `model` is
   * `no-model`. `input` (the request's CEL input) is read only by a model that evaluates
   * something: a conditional choice, its own authorization.
   */
  choose(body: Buffer, input?: CelInputSource): ModelChoice {
    const model = modelOf(body);
    if (model === undefined) return { kind: 'no-model' };
    const entry = selectModel(this.#models, model);
    const compiled = entry && this.#compiled.get(entry);
    if (!compiled) return { kind: 'unknown', model };
    const pick = compiled.choose(model, input);
    return pick.kind === 'picked' ? pick : { kind: pick.kind, model };
  }
}

function modelOf(body: Buffer): string | undefined {
  try {
    const parsed: unknown = JSON.parse(body.toString('utf8'));
    const model = typeof parsed === 'object' && parsed !== null ? (parsed as { model?: unknown }).model : undefined;
    return typeof model === 'string' ? model : undefined;
  } catch {
    return undefined;
  }
}
