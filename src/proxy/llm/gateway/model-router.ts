/**
 * Route by model (ProxyModel, docs/models.md): an `ai` backend with `models` chooses, per request,
 * the entry whose pattern the body's `model` matches (most specific first: the translator ordered
 * them, src/common/model-match.ts), and that entry's priority groups are what the usual picker,
 * failover and provider health work over — or, for weighted and conditional virtual models and
 * models with their own authorization, what model-choice.ts makes of them. Only backends with
 * `models` build one, so plain `ai` backends pay nothing.
 */
import { selectModel } from '../../../common/model-match.ts';
import type { ModelRouteIR } from '../../../ir/ai.ts';
import { CompiledModel, type CelInputSource } from './model-choice.ts';
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

  /** `random` draws weighted virtual models' targets (tests pass a seeded one). */
  constructor(models: readonly ModelRouteIR[], health: ProviderHealth | undefined, random: () => number = Math.random) {
    this.#models = models;
    this.#compiled = new Map(models.map((m) => [m, new CompiledModel(m, health, random)]));
    this.#catalog = catalogOf(models);
  }

  /**
   * The `/v1/models` answer: the Public models a client can name exactly, sorted by name (a
   * wildcard model stands for names that cannot be listed). Anthropic's shape when the client
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

function catalogOf(models: readonly ModelRouteIR[]): { openai: Uint8Array; anthropic: Uint8Array } {
  const names = [...new Set(models.flatMap((m) => (m.visibility === 'Public' && m.pattern.kind === 'exact' ? [m.pattern.name] : [])))].sort();
  const openai = { object: 'list', data: names.map((id) => ({ id, object: 'model', created: 0, owned_by: 'switchboard' })) };
  const anthropic = {
    data: names.map((id) => ({ type: 'model', id, display_name: id, created_at: '1970-01-01T00:00:00Z' })),
    has_more: false, first_id: names[0] ?? null, last_id: names.at(-1) ?? null,
  };
  return { openai: Buffer.from(JSON.stringify(openai)), anthropic: Buffer.from(JSON.stringify(anthropic)) };
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
