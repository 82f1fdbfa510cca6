/** What a provider module tells the facade: where requests go and in which wire format. */
import type { BodyConversion } from './conversions.ts';
import type { LLMProvider, PromptCachingConfig, ProviderToken, RouteType } from '../config.ts';

/** Wire formats the gateway can send upstream. */
export type UpstreamFormat =
  | 'chat' | 'messages' | 'responses' | 'gemini' | 'converse' | 'embeddings'
  | 'count_tokens' | 'gemini_count_tokens' | 'converse_count_tokens' | 'realtime' | 'rerank'
  | 'bedrock_rerank' | 'vertex_rank' | 'bedrock_invoke_embeddings';

/** How the runtime's backend auth puts the credential on the wire for this provider. */
export type CredentialHint =
  | { readonly kind: 'header'; readonly name: string; readonly prefix?: string }
  | { readonly kind: 'sigv4'; readonly service: string; readonly region: string };

export interface UpstreamTarget {
  readonly host: string;
  readonly port: number;
  readonly tls: boolean;
  /** The name TLS checks when `host` is a replica's address (a Service's DNS name); default `host`. */
  readonly serverName?: string;
  /** Refuse the connection when `host` resolves to a loopback, link-local or metadata address (AiProviderIR.guardAddresses). */
  readonly guardAddresses?: true;
}

export interface ProviderEndpoint {
  readonly format: UpstreamFormat;
  /** Path and query, model ids percent-encoded. */
  readonly path: string;
  readonly headers: Readonly<Record<string, string>>;
  readonly credential: CredentialHint;
  /** The body carries no model (it is in the path): Gemini, Bedrock, Vertex Claude. */
  readonly modelInPath?: boolean;
  /** Another host than the provider's for this route (Bedrock Agent Runtime, Discovery Engine); a `host` override on the provider still wins. */
  readonly target?: UpstreamTarget;
  /** The route is served by an API of another shape: the body is converted both ways by this (rerank, Bedrock embeddings). */
  readonly conversion?: BodyConversion;
}

export interface EndpointQuery {
  readonly route: RouteType;
  /** The model after overrides and aliases. */
  readonly model: string;
  readonly stream: boolean;
  readonly promptCaching?: PromptCachingConfig;
}

export interface ProviderModule<C = unknown> {
  readonly token: ProviderToken;
  /** The provider's member of the config (`providerA`, …). */
  config(p: LLMProvider): C;
  target(p: LLMProvider, c: C): UpstreamTarget;
  /** The upstream format and path serving a route, or undefined when the provider cannot serve it. */
  endpoint(p: LLMProvider, c: C, q: EndpointQuery): ProviderEndpoint | undefined;
  /** Provider-specific changes after conversion (Vertex's anthropic_version, Bedrock's guardrail …). */
  finalizeBody?(c: C, format: UpstreamFormat, body: Record<string, unknown>, q: EndpointQuery): Record<string, unknown>;
}
