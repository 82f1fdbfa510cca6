/**
 * Puts the backend's credentials on an upstream LLM request: keys (inline, from a Secret, or the
 * client's validated token with passthrough) where the provider expects them unless `location`
 * says otherwise, extra `credentials[]`, cloud-B/cloud-C bearer tokens (cached: Entra client
 * secret, workload or managed identity; Google access or ID tokens), and SigV4
 * for providers that need it (signed last, over the final headers and body).
 */
import { readFileSync } from 'node:fs';
import type { BackendAuthPolicy, CredentialLocation } from '../../../../ir/policy.ts';
import { applyBackendCredentials } from '../../../backend-policies/auth.ts';
import type { RequestIdentity } from '../../../policies/context.ts';
import type { CredentialHint } from '../../providers/types.ts';
import { awsCredentials, signSigV4 } from './sigv4.ts';
import { azureAccessToken, azureManagedIdentityToken, azureWorkloadToken, gcpAccessToken, gcpIdToken, gcpMetadataToken, parseServiceAccount, type ServiceAccount } from './oauth.ts';
import { TokenCache } from './token-cache.ts';

/** A credential could not be produced (missing cloud credentials, token endpoint down). */
export class CredentialError extends Error {}

/** Backend auth mechanisms the LLM handler cannot apply yet (the plain forwarding path has some of them). */
const UNSUPPORTED_AUTH = ['oauthTokenExchange', 'crossAppAccess', 'jwtSign'] as const;

export interface SignableRequest {
  /** The Host header the request is sent with. */
  readonly host: string;
  readonly method: string;
  readonly path: string;
  readonly headers: Readonly<Record<string, string>>;
  readonly body: Uint8Array;
  readonly credential: CredentialHint;
}

type Dict = Readonly<Record<string, unknown>>;
const dict = (v: unknown): Dict | undefined => (typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Dict) : undefined);

export class LlmCredentials {
  readonly #tokens: TokenCache;
  readonly #env: NodeJS.ProcessEnv;

  constructor(opts: { tokens?: TokenCache; env?: NodeJS.ProcessEnv } = {}) {
    this.#tokens = opts.tokens ?? new TokenCache();
    this.#env = opts.env ?? process.env;
  }

  /** The headers and path to send. Throws CredentialError when the configured mechanism cannot produce a credential. */
  async apply(req: SignableRequest, auth: BackendAuthPolicy | undefined, identity: Readonly<RequestIdentity>): Promise<{ headers: Record<string, string>; path: string }> {
    const hint = req.credential;
    const defaultLocation: CredentialLocation = hint.kind === 'header' ? { header: { name: hint.name, ...(hint.prefix ? { prefix: hint.prefix } : {}) } } : { header: { name: 'authorization', prefix: 'Bearer ' } };
    let written: { headers: Record<string, string | string[]>; path: string } = { headers: { ...req.headers }, path: req.path };
    if (auth) {
      // Never forward without the credential the operator asked for: say which mechanism is missing.
      for (const unsupported of UNSUPPORTED_AUTH) {
        if (auth[unsupported] !== undefined) throw new CredentialError(`backend auth ${unsupported} is not supported for LLM providers yet`);
      }
      const bearer = await this.#oauthToken(auth, req.host);
      const primary: BackendAuthPolicy = bearer !== undefined ? { ...auth, key: bearer, location: { header: { name: 'authorization', prefix: 'Bearer ' } } } : { ...auth, location: auth.location ?? defaultLocation };
      written = applyBackendCredentials(written.headers, written.path, primary, identity);
    }
    const headers = Object.fromEntries(Object.entries(written.headers).map(([k, v]) => [k, Array.isArray(v) ? v.join(', ') : v]));
    const signingWanted = hint.kind === 'sigv4' || auth?.cloudA !== undefined;
    if (!signingWanted || (auth?.key !== undefined && auth.cloudA === undefined)) return { headers, path: written.path };
    const cloudA = dict(auth?.cloudA);
    const credentials = awsCredentials(dict(cloudA?.secret), this.#env);
    if (!credentials) throw new CredentialError('no cloud-A credentials: set auth.cloudA.secretRef or AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY');
    const service = (typeof cloudA?.serviceName === 'string' ? cloudA.serviceName : undefined) ?? (hint.kind === 'sigv4' ? hint.service : undefined);
    const region = (typeof cloudA?.region === 'string' ? cloudA.region : undefined) ?? (hint.kind === 'sigv4' ? hint.region : undefined) ?? this.#env.AWS_REGION;
    if (!service || !region) throw new CredentialError('cloud-A signing needs a service name and region');
    return { headers: signSigV4({ ...req, headers, path: written.path, service, region }, credentials), path: written.path };
  }

  /** A bearer token from cloudB/cloudC, or undefined when neither is configured. */
  async #oauthToken(auth: BackendAuthPolicy, host: string): Promise<string | undefined> {
    const env = this.#env;
    const cloudC = dict(auth.cloudC);
    if (cloudC) {
      const account = this.#serviceAccount(cloudC.secret);
      if (cloudC.type === 'IdToken') {
        // Cloud Run checks the audience against its service URL: by default the backend's own origin.
        const audience = typeof cloudC.audience === 'string' && cloudC.audience !== '' ? cloudC.audience : `https://${host.replace(/:\d+$/, '')}`;
        if (account) return this.#fetch(`gcp-id ${account.client_email} ${account.token_uri ?? ''} ${audience}`, () => gcpIdToken(account, audience));
        return this.#fetch(`gcp-md-id ${env.GCE_METADATA_HOST ?? ''} ${audience}`, () => gcpMetadataToken('id', env, audience));
      }
      if (account) return this.#fetch(`gcp ${account.client_email} ${account.token_uri ?? ''}`, () => gcpAccessToken(account));
      return this.#fetch(`gcp-md ${env.GCE_METADATA_HOST ?? ''}`, () => gcpMetadataToken('access', env));
    }
    const cloudB = dict(auth.cloudB);
    if (cloudB) {
      const str = (v: unknown) => (typeof v === 'string' ? v : '');
      const authority = env.AZURE_AUTHORITY_HOST ? { authority: env.AZURE_AUTHORITY_HOST } : {};
      const secret = dict(cloudB.secret);
      if (secret) {
        const client = { tenantId: str(secret.tenantID), clientId: str(secret.clientID), clientSecret: str(secret.clientSecret), ...authority };
        if (!client.tenantId || !client.clientId || !client.clientSecret) throw new CredentialError('the cloud-B Secret needs clientID, tenantID and clientSecret');
        return this.#fetch(`azure ${client.tenantId} ${client.clientId} ${client.authority ?? ''}`, () => azureAccessToken(client));
      }
      const managed = dict(cloudB.managedIdentity);
      // Nothing chosen: workload identity when the cluster projected a federated token, else managed identity.
      const workload = cloudB.workloadIdentity !== undefined || (!managed && env.AZURE_FEDERATED_TOKEN_FILE !== undefined);
      if (workload) {
        const w = { tenantId: env.AZURE_TENANT_ID ?? '', clientId: env.AZURE_CLIENT_ID ?? '', tokenFile: env.AZURE_FEDERATED_TOKEN_FILE ?? '', ...authority };
        if (!w.tenantId || !w.clientId || !w.tokenFile) throw new CredentialError('cloud-B workload identity needs AZURE_FEDERATED_TOKEN_FILE, AZURE_CLIENT_ID and AZURE_TENANT_ID');
        return this.#fetch(`azure-wi ${w.tenantId} ${w.clientId} ${w.tokenFile} ${w.authority ?? ''}`, () => azureWorkloadToken(w));
      }
      const id = { clientId: str(managed?.clientId), objectId: str(managed?.objectId), resourceId: str(managed?.resourceId) };
      const where = env.IDENTITY_ENDPOINT ?? env.AZURE_POD_IDENTITY_AUTHORITY_HOST ?? '';
      return this.#fetch(`azure-mi ${id.clientId} ${id.objectId} ${id.resourceId} ${where}`, () => azureManagedIdentityToken(id, env));
    }
    return undefined;
  }

  /** The Secret's service account JSON, else the ambient GOOGLE_APPLICATION_CREDENTIALS file, else undefined (metadata server). */
  #serviceAccount(secret: unknown): ServiceAccount | undefined {
    const file = this.#env.GOOGLE_APPLICATION_CREDENTIALS;
    if (typeof secret !== 'string' && !file) return undefined;
    try {
      return parseServiceAccount(typeof secret === 'string' ? secret : readFileSync(file as string, 'utf8'));
    } catch (err) {
      // A bad or unreadable key file is a credential problem (502 and a clear log), not an unreachable provider.
      throw new CredentialError(`unusable cloud-C service account: ${err instanceof Error ? err.message : String(err)}`);
    }
  }

  async #fetch(key: string, fetch: Parameters<TokenCache['get']>[1]): Promise<string> {
    try {
      return await this.#tokens.get(key, fetch);
    } catch (err) {
      throw new CredentialError(`could not obtain an access token: ${err instanceof Error ? err.message : String(err)}`);
    }
  }
}
