import type { Logger } from '../../../../../common/logger.ts';
import type { McpOAuthConfig } from './config.ts';
import { DiscoveryCache, type Metadata } from './discovery.ts';
import { AUTHORIZE_PREFIX, documentPath, PROTECTED_RESOURCE_PREFIX, REGISTRATION_PREFIX, TOKEN_PREFIX } from './paths.ts';
import { quirksOf, type ProviderQuirks } from './providers.ts';

/** Where a client reached the gateway: `scheme://host[:port]` as it sent them, and the resource's path. */
export interface ResourceAddress {
  readonly origin: string;
  readonly path: string;
}

export const resourceUrl = (a: ResourceAddress): string => (a.path === '/' ? `${a.origin}/` : a.origin + a.path);

/**
 * One policy's MCP OAuth face, compiled once per config: the RFC 9728 document, the 401 challenge,
 * and — when the gateway fronts the IdP (a `provider` or `clientId` is set) — the adjusted RFC 8414
 * document, the DCR short-circuit and the `audience` redirect.
 */
export class McpOAuthResource {
  readonly config: McpOAuthConfig;
  readonly quirks: ProviderQuirks;
  /** The gateway publishes its own authorization-server metadata instead of pointing at the issuer. */
  readonly fronted: boolean;
  readonly logger: Logger;
  readonly #audience: string | undefined;
  readonly #discovery: DiscoveryCache;

  constructor(config: McpOAuthConfig, audience: string | undefined, logger: Logger) {
    this.config = config;
    this.quirks = quirksOf(config.provider);
    this.fronted = config.provider !== undefined || config.clientId !== undefined;
    this.#audience = audience;
    this.logger = logger;
    this.#discovery = new DiscoveryCache(config.issuer, this.quirks, logger);
  }

  metadataUrl(a: ResourceAddress): string {
    return a.origin + documentPath(PROTECTED_RESOURCE_PREFIX, a.path);
  }

  /** RFC 6750 §3 challenge with the RFC 9728 §5.1 `resource_metadata` parameter. */
  challenge(a: ResourceAddress, rejected?: { readonly error: string; readonly description: string }): string {
    const params = [`resource_metadata=${quoted(this.metadataUrl(a))}`];
    if (rejected) params.push(`error=${quoted(rejected.error)}`, `error_description=${quoted(rejected.description)}`);
    return `Bearer ${params.join(', ')}`;
  }

  /** RFC 9728 §2; `resourceMetadata` entries are merged last so operators can override any field. */
  protectedResource(a: ResourceAddress): Metadata {
    const authorizationServer = this.fronted ? resourceUrl(a) : this.config.issuer;
    return {
      resource: resourceUrl(a),
      authorization_servers: [authorizationServer],
      bearer_methods_supported: ['header'],
      ...this.config.resourceMetadata,
    };
  }

  /**
   * The IdP's RFC 8414 / OIDC document with the gateway's corrections. The issuer stays the IdP's:
   * it is what the tokens carry and what the JWT providers verify.
   */
  async authorizationServer(a: ResourceAddress): Promise<Metadata> {
    const doc: Metadata = { ...(await this.#discovery.get()) };
    if (this.config.clientId !== undefined) doc.registration_endpoint = a.origin + documentPath(REGISTRATION_PREFIX, a.path);
    else if (!this.quirks.dynamicRegistration) delete doc.registration_endpoint;
    if (!this.quirks.advertisesPkce && doc.code_challenge_methods_supported === undefined) doc.code_challenge_methods_supported = ['S256'];
    if (this.quirks.audienceParameter && typeof doc.authorization_endpoint === 'string') {
      doc.authorization_endpoint = a.origin + documentPath(AUTHORIZE_PREFIX, a.path);
    }
    if (this.config.clientSecret !== undefined) {
      // The gateway authenticates the client to the IdP; towards the gateway it is a public client.
      doc.token_endpoint = a.origin + documentPath(TOKEN_PREFIX, a.path);
      doc.token_endpoint_auth_methods_supported = ['none'];
    }
    return doc;
  }

  /**
   * The IdP's own token endpoint, and how it wants the client secret: HTTP Basic only when its
   * metadata lists `client_secret_basic` and not `client_secret_post` (RFC 8414 §2: an absent
   * list means `client_secret_basic`); the form body otherwise.
   */
  async idpTokenEndpoint(): Promise<{ readonly url: string; readonly basic: boolean } | undefined> {
    const doc = await this.#discovery.get();
    const url = doc.token_endpoint;
    if (typeof url !== 'string' || !URL.canParse(url)) return undefined;
    const methods = Array.isArray(doc.token_endpoint_auth_methods_supported) ? doc.token_endpoint_auth_methods_supported : ['client_secret_basic'];
    return { url, basic: methods.includes('client_secret_basic') && !methods.includes('client_secret_post') };
  }

  /** Where the `audience` redirect sends the browser: the IdP's endpoint with the client's query plus `audience`. */
  async authorizeRedirect(a: ResourceAddress, query: string): Promise<string | undefined> {
    const endpoint = (await this.#discovery.get()).authorization_endpoint;
    if (typeof endpoint !== 'string' || !URL.canParse(endpoint)) return undefined;
    const target = new URL(endpoint);
    const params = new URLSearchParams(query);
    for (const [k, v] of params) target.searchParams.append(k, v);
    if (!params.has('audience')) target.searchParams.set('audience', this.#audience ?? params.get('resource') ?? resourceUrl(a));
    return target.href;
  }

  /**
   * RFC 7591 §3.2.1 answer without calling the IdP: the configured client id, echoing the client's
   * metadata. No secret is issued: the client is public (PKCE), as MCP clients expect.
   */
  register(clientMetadata: Metadata): Metadata {
    return {
      ...clientMetadata,
      client_id: this.config.clientId,
      client_id_issued_at: Math.floor(Date.now() / 1000),
      token_endpoint_auth_method: 'none',
    };
  }
}

function quoted(value: string): string {
  return `"${value.replace(/["\\]/g, '\\$&')}"`;
}
