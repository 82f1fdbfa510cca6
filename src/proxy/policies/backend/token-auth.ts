/**
 * The backend auth mechanisms that produce a fresh or exchanged token per request — `jwtSign`,
 * `oauthTokenExchange` and `crossAppAccess` — behind one interface, compiled once per auth object
 * and shared by plain backends (compile.ts), MCP targets and the LLM handler's credentials.
 */
import type { BackendAuthPolicy, CredentialLocation } from '../../../ir/policy.ts';
import { compileCrossAppAccess } from './cross-app-access.ts';
import { compileJwtSigner } from './jwt-sign.ts';
import type { CredentialSource } from './oauth-endpoint.ts';
import { compileTokenExchange } from './token-exchange.ts';

export type TokenMechanismKind = 'jwtSign' | 'oauthTokenExchange' | 'crossAppAccess';

export interface TokenMechanism {
  readonly kind: TokenMechanismKind;
  /** Where the token is written (each mechanism's `location`, default Authorization: Bearer). */
  readonly location: CredentialLocation;
  /** The token depends on the client request (a subject token): `token` needs `ctx`. */
  readonly needsRequest: boolean;
  /**
   * The token for this request. Rejects with TokenExchangeRejection when the request carries no
   * usable subject token, TokenEndpointError when a token endpoint fails.
   */
  token(ctx: CredentialSource | undefined): Promise<string>;
}

/**
 * The auth's token mechanism, or undefined when it uses none (key, secretRef, passthrough, cloud
 * credentials). Throws when the mechanism's configuration cannot work (bad key, missing endpoint).
 */
export function compileTokenMechanism(auth: BackendAuthPolicy | undefined): TokenMechanism | undefined {
  if (!auth) return undefined;
  if (auth.jwtSign) {
    const signer = compileJwtSigner(auth.jwtSign);
    return { kind: 'jwtSign', location: signer.location, needsRequest: false, token: () => signer.sign() };
  }
  if (auth.oauthTokenExchange) {
    const exchanger = compileTokenExchange(auth.oauthTokenExchange);
    return { kind: 'oauthTokenExchange', location: exchanger.location, needsRequest: true, token: (ctx) => (ctx ? exchanger.exchange(ctx) : noContext()) };
  }
  if (auth.crossAppAccess) {
    const xaa = compileCrossAppAccess(auth.crossAppAccess);
    return { kind: 'crossAppAccess', location: xaa.location, needsRequest: true, token: (ctx) => (ctx ? xaa.accessToken(ctx) : noContext()) };
  }
  return undefined;
}

function noContext(): Promise<never> {
  return Promise.reject(new Error('the request context is needed to read the subject token'));
}
