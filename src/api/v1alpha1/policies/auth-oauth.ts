/** OAuth-based backend credentials: token exchange (RFC 8693 / RFC 7523), cross-app access (ID-JAG) and signed JWTs. */
import { Int, JsonValue, List, MapOf, Obj, OneOf, Opt, Str } from '../schema/build.ts';
import { has, together } from '../schema/rules.ts';
import { CELExpression, Duration, ShortString } from '../scalars.ts';
import { LocalSecretKeyRef, endpointProperties, endpointRule } from '../refs.ts';
import { AuthorizationExtractionLocation, AuthorizationLocation } from '../common/location.ts';
import { RESERVED_JWT_CLAIMS } from '../common/values.ts';

export { RESERVED_JWT_CLAIMS };

export const JWT_SIGNING_ALGS = ['RS256', 'RS384', 'RS512', 'PS256', 'ES256', 'ES384'] as const;
export const REQUESTED_TOKEN_TYPES = ['AccessToken', 'Jwt', 'IdToken', 'IdJag'] as const;

const SigningAlg = () => OneOf(JWT_SIGNING_ALGS, { default: 'RS256' });

/** Built-in token type names, or any absolute URI passed through. */
export const OAuthTokenType = (defaultValue?: string) =>
  Str(1, 1024, {
    default: defaultValue,
    pattern: '^(AccessToken|Jwt|IdToken|IdJag|[A-Za-z][A-Za-z0-9+.-]*:[^\\s]+)$',
    'x-switchboard-expected': 'AccessToken, Jwt, IdToken, IdJag or an absolute URI',
  });

const EndpointPath = () => Str(1, 1024, { pattern: '^/', default: '/', 'x-switchboard-expected': "a path starting with '/'" });

export const OAuthPrivateKeyJWT = () =>
  Obj({
    signingKeyRef: LocalSecretKeyRef('signingKey', 'PEM RSA or EC private key'),
    certificateRef: Opt(LocalSecretKeyRef('certificate', 'PEM certificate chain, leaf first')),
    certificateHeader: Opt(OneOf(['x5c', 'x5t#S256'] as const)),
    alg: Opt(SigningAlg()),
    kid: Opt(ShortString()),
    assertionAudience: Str(1, 1024),
  }, { rules: [together('certificateRef', 'certificateHeader')] });

export const OAuthClientAuth = (description = 'how the client authenticates to the token endpoint; none when unset') =>
  Obj({
    clientId: Str(1, 1024),
    secretRef: Opt(LocalSecretKeyRef('clientSecret', 'client secret')),
    privateKeyJwt: Opt(OAuthPrivateKeyJWT()),
    method: Opt(OneOf(['ClientSecretBasic', 'ClientSecretPost', 'PrivateKeyJwt'] as const, { default: 'ClientSecretBasic' })),
  }, {
    description,
    rules: [
      {
        path: '.privateKeyJwt',
        message: 'privateKeyJwt is required when method is PrivateKeyJwt',
        cel: "!has(self.method) || self.method != 'PrivateKeyJwt' || has(self.privateKeyJwt)",
        check: (s) => s.method !== 'PrivateKeyJwt' || has(s, 'privateKeyJwt'),
      },
      {
        path: '.secretRef',
        message: 'secretRef is required unless method is ClientSecretPost (client_id only) or PrivateKeyJwt',
        cel: "has(self.secretRef) || (has(self.method) && (self.method == 'ClientSecretPost' || self.method == 'PrivateKeyJwt'))",
        check: (s) => has(s, 'secretRef') || s.method === 'ClientSecretPost' || s.method === 'PrivateKeyJwt',
      },
    ],
  });

export const OAuthTokenCache = () =>
  Obj({
    inMemory: Opt(Obj({
      maxEntries: Opt(Int(0, undefined, { default: 8192, description: '0 disables the cache' })),
      defaultTtl: Opt(Duration({ default: '300s', description: 'used when the token endpoint omits expires_in' })),
    }, { default: {} })),
  });

export const OAuthTokenSpec = (defaultType?: string) =>
  Obj({ source: Opt(AuthorizationExtractionLocation('default the Authorization header with the Bearer prefix')), tokenType: Opt(OAuthTokenType(defaultType)) });

const StringList = (description: string) => List(Str(1, 1024), { min: 1, max: 64, description });

export const OAuthTokenExchange = () =>
  Obj({
    ...endpointProperties,
    path: Opt(EndpointPath()),
    grantType: Opt(OneOf(['TokenExchange', 'JwtBearer'] as const, { default: 'TokenExchange', description: 'TokenExchange (RFC 8693) or JwtBearer (RFC 7523)' })),
    subjectToken: Opt(OAuthTokenSpec()),
    actorToken: Opt(Obj({
      source: AuthorizationExtractionLocation(),
      tokenType: Opt(OAuthTokenType()),
      mayAct: Opt(OneOf(['Required'] as const, { description: "Required: the subject's may_act claim must authorize the actor" })),
    })),
    audiences: Opt(List(ShortString(), { max: 64 })),
    scopes: Opt(StringList('requested scopes')),
    resources: Opt(StringList('requested resources')),
    requestedTokenType: Opt(OneOf(REQUESTED_TOKEN_TYPES)),
    additionalParams: Opt(MapOf(CELExpression(), { max: 64, description: 'extra form parameters, CEL over the incoming request' })),
    clientAuth: Opt(OAuthClientAuth()),
    location: Opt(AuthorizationLocation()),
    cache: Opt(OAuthTokenCache()),
  }, {
    description: 'exchange the client token at an OAuth token endpoint',
    rules: [endpointRule(), {
      path: '.actorToken',
      message: 'actorToken may only be set with grantType TokenExchange',
      cel: "!has(self.actorToken) || !has(self.grantType) || self.grantType == 'TokenExchange'",
      check: (s) => !has(s, 'actorToken') || s.grantType === undefined || s.grantType === 'TokenExchange',
    }],
  });

const TokenEndpoint = (description: string) =>
  Obj({ ...endpointProperties, path: Opt(EndpointPath()), clientAuth: OAuthClientAuth('how the gateway authenticates to this endpoint') }, { description, rules: [endpointRule()] });

export const CrossAppAccess = () =>
  Obj({
    identityProvider: TokenEndpoint('performs the RFC 8693 exchange for an ID-JAG'),
    resourceAuthorizationServer: TokenEndpoint('performs the RFC 7523 jwt-bearer exchange'),
    audience: ShortString({ description: 'the ID-JAG is bound to it' }),
    resources: Opt(StringList('requested resources')),
    scopes: Opt(StringList('requested scopes')),
    subjectToken: Opt(OAuthTokenSpec('IdToken')),
    cache: Opt(OAuthTokenCache()),
  }, { description: 'ID-JAG cross-app access' });

export const JwtSign = () =>
  Obj({
    signingKeyRef: LocalSecretKeyRef('signingKey', 'PEM RSA or EC private key'),
    alg: Opt(SigningAlg()),
    kid: Opt(ShortString()),
    claims: Opt(MapOf(JsonValue(), { description: 'claims of the token; iat, exp and nbf are set by the gateway' })),
    ttl: Opt(Duration({ default: '300s', description: 'lifetime of the token (sets exp)' })),
    location: Opt(AuthorizationLocation('default the Authorization header with the "Bearer " prefix')),
  }, {
    description: 'sign a short-lived JWT per request',
    rules: [{
      path: '.claims',
      message: 'claims may not contain iat, exp or nbf (the gateway sets them)',
      cel: "!has(self.claims) || !('iat' in self.claims || 'exp' in self.claims || 'nbf' in self.claims)",
      check: (s) => !has(s, 'claims') || !RESERVED_JWT_CLAIMS.some((c) => c in (s.claims as object)),
    }],
  });
