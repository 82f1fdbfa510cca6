/**
 * The IR of an AI backend (ProxyBackend `spec.ai` plus its `policies.ai`): providers with their
 * addresses resolved, priority groups, each provider's inline policies lowered (Secrets
 * resolved), and the backend's AI policy as written (CEL already checked by the translator).
 * What the proxy's LLM handler (src/proxy/llm) serves. Plain, JSON-serialisable, readonly data.
 */
import type { AuthorizationPolicy, BackendPolicy, Json } from './policy.ts';
import type { Endpoint } from './types.ts';
import type { MatchableModel } from '../common/model-match.ts';

/**
 * SPEC.md's RouteType values, plus `Rerank`, which `routes` cannot name (SPEC.md's enum lacks it):
 * the runtime gives it to paths ending in `/rerank` that no explicit `routes` key claims.
 */
export type RouteType =
  | 'Completions' | 'Messages' | 'Models' | 'Passthrough' | 'Responses' | 'TokenCount' | 'Embeddings' | 'Realtime' | 'Rerank';

export type ProviderFormat = 'Completions' | 'Messages' | 'Responses' | 'Embeddings' | 'TokenCount' | 'Realtime' | 'Rerank';

export interface ProviderCommon {
  readonly host?: string;
  readonly port?: number;
  readonly path?: string;
  /** Only honoured for providerA and providerD (SPEC.md). */
  readonly pathPrefix?: string;
}

/** `providerA.moderation` (SPEC.md): the inline moderation parameter, `model` default omni-moderation-latest. */
export interface OpenAIModeration {
  readonly model?: string;
  readonly policy?: { readonly input?: { readonly mode: 'Score' | 'Block' }; readonly output?: { readonly mode: 'Score' | 'Block' } };
}
export interface OpenAIConfig { readonly model?: string; readonly moderation?: OpenAIModeration }
export interface AzureOpenAIConfig { readonly endpoint: string; readonly deploymentName?: string; readonly apiVersion?: string }
export interface AzureAIConfig {
  readonly resourceName: string;
  readonly resourceType: 'ResourceTypeA' | 'ResourceTypeB';
  readonly apiVersion?: string;
  readonly projectName?: string;
  readonly model?: string;
}
export interface AnthropicConfig { readonly model?: string }
export interface GeminiConfig { readonly model?: string }
export interface VertexConfig { readonly model?: string; readonly projectId: string; readonly region: string }
export interface BedrockConfig {
  readonly region?: string;
  readonly guardrail?: { readonly identifier: string; readonly version: string };
  readonly model?: string;
}
export interface CustomConfig {
  /** The Service target as written; the translator also sets the provider's host/port to its cluster DNS name. */
  readonly backendRef?: { readonly name: string; readonly port?: number };
  readonly formats: readonly { readonly type: ProviderFormat; readonly path?: string }[];
  readonly model?: string;
}

/** SPEC.md LLMProvider: one-of the provider members, plus the common members. */
export type LLMProvider = ProviderCommon & (
  | { readonly providerA: OpenAIConfig }
  | { readonly providerB: AzureOpenAIConfig }
  | { readonly providerC: AzureAIConfig }
  | { readonly providerD: AnthropicConfig }
  | { readonly providerE: GeminiConfig }
  | { readonly providerF: VertexConfig }
  | { readonly providerG: BedrockConfig }
  | { readonly custom: CustomConfig }
);

/** `ai.promptCaching` (SPEC.md PromptCachingConfig): Bedrock cache points, for model families that support them. */
export interface PromptCachingConfig {
  readonly cacheSystem?: boolean;
  readonly cacheMessages?: boolean;
  readonly cacheTools?: boolean;
  readonly minTokens?: number;
  readonly cacheMessageOffset?: number;
}

export interface FieldValue { readonly field: string; readonly value: Json }
export interface FieldExpression { readonly field: string; readonly expression: string }
export interface PromptMessage { readonly role: string; readonly content: string }

/**
 * SPEC.md BackendAI with the field names as written, so the `ai` member of an effective
 * BackendPolicy (passed through as written) reads the same way.
 */
export interface AiPolicy {
  readonly prompt?: { readonly prepend?: readonly PromptMessage[]; readonly append?: readonly PromptMessage[] };
  /** Carried for the prompt-guard feature; the LLM handler does not apply it. */
  readonly promptGuard?: Json;
  readonly defaults?: readonly FieldValue[];
  readonly overrides?: readonly FieldValue[];
  readonly transformations?: readonly FieldExpression[];
  readonly finalTransformations?: readonly FieldExpression[];
  readonly modelAliases?: Readonly<Record<string, string>>;
  readonly promptCaching?: PromptCachingConfig;
  /** Path suffix (ends-with; `*` any path) → route type; unmatched traffic is Completions. */
  readonly routes?: Readonly<Record<string, RouteType>>;
}

export interface AiProviderIR {
  /** The NamedLLMProvider's name; `default` for a backend with a single `provider`. */
  readonly name: string;
  readonly provider: LLMProvider;
  /**
   * A custom provider's Service replicas (ready endpoints of the referenced port): the proxy
   * connects to them in turn. Absent: it connects to the provider's host and port.
   */
  readonly endpoints?: readonly Endpoint[];
  /** The provider's inline `policies` lowered like backend policies (they beat every other source). */
  readonly policies?: BackendPolicy;
  /**
   * SSRF guard at connect time (a ProxyModel's vendor address or `baseURL`, docs/models.md): the
   * proxy refuses to connect when the name resolves to a loopback, link-local, unspecified or
   * metadata address. Absent: no check (ProxyBackends, a ProxyModel's Custom Service).
   */
  readonly guardAddresses?: true;
}

export interface AiBackendIR {
  /** The IR backend key (`backend/<ns>/<name>`). */
  readonly key: string;
  /** Priority order; a single `provider` is one group of one. */
  readonly groups: readonly { readonly providers: readonly AiProviderIR[] }[];
  /** `spec.policies.ai` as written; the effective BackendPolicy's `ai` wins when the request has one. */
  readonly policy?: AiPolicy;
  /**
   * ProxyModels (docs/models.md): the request's `model` selects one entry (most specific first,
   * already ordered), whose groups replace `groups` for that request; no match is a 404.
   */
  readonly models?: readonly ModelRouteIR[];
  /**
   * With `models`: the model catalog of the Gateways the models rule's route attaches to
   * (Gateway-level ProxyParameters `modelCatalog`, docs/models.md), merged by id. `/v1/models`
   * lists an entry when a client could request its id, with its metadata.
   */
  readonly catalog?: readonly ModelCatalogEntryIR[];
}

/** One model of a catalog ConfigMap: its id and what `/v1/models` says about it. */
export interface ModelCatalogEntryIR {
  readonly id: string;
  /** OpenAI's `owned_by`. */
  readonly ownedBy?: string;
  /** Unix seconds: OpenAI's `created`, Anthropic's `created_at`. */
  readonly created?: number;
  /** Anthropic's `display_name`. */
  readonly displayName?: string;
}

/** One ProxyModel as a route-by-model entry: its match pattern, visibility and providers. */
export interface ModelRouteIR extends MatchableModel {
  readonly groups: readonly { readonly providers: readonly AiProviderIR[] }[];
  /**
   * `weighted` and `conditional` virtual models: `groups[i]` is target i (one provider), and this
   * says which one a request takes. Absent: the groups are priority groups (a concrete model, `failover`).
   */
  readonly choice?: ModelChoiceIR;
  /** The model's own `policies.authorization` (one rule; CEL checked by the translator): a request naming the model must pass it. */
  readonly authorization?: AuthorizationPolicy;
}

/** How a weighted or conditional virtual model picks its target (index into the model's `groups`). */
export type ModelChoiceIR =
  | { readonly kind: 'weighted'; readonly weights: readonly number[] }
  /** In order, the first whose `when` (CEL, bool) is true; an entry without `when` is the fallback (last). */
  | { readonly kind: 'conditional'; readonly branches: readonly { readonly when?: string }[] };
