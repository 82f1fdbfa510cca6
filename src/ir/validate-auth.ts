/**
 * Shape checks of the typed credential members (backend `auth`, `jwtAuthentication.mcp`) for
 * src/ir/validate.ts. The proxy reads these members through their IR types without casts, so a
 * config is only published when each one has the shape its type promises. Every check here is
 * one the API schema already enforces on what the translator lowers (required fields, one of
 * `backendRef`/`url`, at most one auth mechanism, enums): a failure is a translator bug (or a
 * hand-written IR), never a user's mistake — those are reported on the policy's status and the
 * member is dropped before it reaches the IR.
 */
import { IDP_VALUES, RESERVED_JWT_CLAIMS } from '../api/v1alpha1/common/values.ts';
import type {
  BackendAuthPolicy, CredentialLocation, JwtMcpPolicy, OAuthClientAuthPolicy, OAuthTokenCachePolicy, OAuthTokenEndpointPolicy,
} from './policy.ts';
import type { IrPath } from './validate-path.ts';

/** Reports one problem at `path` (rendered in JavaScript property-access form from the config root). */
export type Report = (path: IrPath, message: string) => void;
/** Appends a property or index to a path. */
export type At = (base: IrPath, key: string | number) => IrPath;

const PRIMARY_MECHANISMS = ['key', 'passthrough', 'cloudA', 'cloudB', 'cloudC', 'oauthTokenExchange', 'crossAppAccess', 'jwtSign'] as const;
const CLIENT_AUTH_METHODS: readonly string[] = ['ClientSecretBasic', 'ClientSecretPost', 'PrivateKeyJwt'];

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const isNonEmptyString = (v: unknown): boolean => typeof v === 'string' && v !== '';
const isNonNegative = (n: unknown): boolean => typeof n === 'number' && Number.isFinite(n) && n >= 0;

/**
 * Backend `auth`: at most one primary mechanism (the proxy uses the first it finds, so two would
 * silently drop one), and the token mechanisms complete enough to compile.
 */
export function checkBackendAuth(report: Report, at: At, path: IrPath, auth: BackendAuthPolicy): void {
  const set = PRIMARY_MECHANISMS.filter((m) => auth[m] !== undefined);
  if (set.length > 1) report(path, `at most one auth mechanism may be set, found ${set.join(', ')}`);
  if (auth.location) checkLocation(report, at(path, 'location'), auth.location);
  auth.credentials?.forEach((c, i) => checkLocation(report, at(at(at(path, 'credentials'), i), 'location'), c.location));
  const exchange = auth.oauthTokenExchange;
  if (exchange) {
    const p = at(path, 'oauthTokenExchange');
    checkEndpoint(report, p, exchange);
    if (exchange.clientAuth) checkClientAuth(report, at, at(p, 'clientAuth'), exchange.clientAuth);
    for (const [name, expression] of Object.entries(exchange.additionalParams ?? {})) {
      if (typeof expression !== 'string' || expression.trim() === '') report(at(at(p, 'additionalParams'), name), 'empty CEL expression');
    }
    if (exchange.location) checkLocation(report, at(p, 'location'), exchange.location);
    checkCache(report, at, at(p, 'cache'), exchange.cache);
  }
  const xaa = auth.crossAppAccess;
  if (xaa) {
    const p = at(path, 'crossAppAccess');
    for (const side of ['identityProvider', 'resourceAuthorizationServer'] as const) {
      // Required by the type; a hand-written IR may still omit them.
      const endpoint = (xaa as Partial<typeof xaa>)[side];
      if (!isObject(endpoint)) {
        report(at(p, side), 'missing token endpoint');
        continue;
      }
      checkEndpoint(report, at(p, side), endpoint);
      const clientAuth = (endpoint as Partial<typeof endpoint>).clientAuth;
      if (!isObject(clientAuth)) report(at(at(p, side), 'clientAuth'), 'missing clientAuth');
      else checkClientAuth(report, at, at(at(p, side), 'clientAuth'), clientAuth);
    }
    if (!isNonEmptyString(xaa.audience)) report(at(p, 'audience'), 'missing audience');
    checkCache(report, at, at(p, 'cache'), xaa.cache);
  }
  const jwtSign = auth.jwtSign;
  if (jwtSign) {
    const p = at(path, 'jwtSign');
    if (typeof jwtSign.signingKey !== 'string') report(at(p, 'signingKey'), 'missing signing key (signingKeyRef unresolved)');
    if (jwtSign.claims !== undefined) {
      if (!isObject(jwtSign.claims)) report(at(p, 'claims'), 'claims must be an object');
      else for (const claim of RESERVED_JWT_CLAIMS) if (claim in jwtSign.claims) report(at(at(p, 'claims'), claim), `${claim} is set by the gateway`);
    }
    if (jwtSign.ttlMs !== undefined && !isNonNegative(jwtSign.ttlMs)) report(at(p, 'ttlMs'), `${String(jwtSign.ttlMs)} is not a non-negative number of milliseconds`);
    if (jwtSign.location) checkLocation(report, at(p, 'location'), jwtSign.location);
  }
}

/** `jwtAuthentication.mcp`: the fields the MCP OAuth discovery documents are built from. */
export function checkJwtMcp(report: Report, at: At, path: IrPath, mcp: JwtMcpPolicy): void {
  if (mcp.resourceMetadata !== undefined && !isObject(mcp.resourceMetadata)) report(at(path, 'resourceMetadata'), 'resourceMetadata must be an object');
  if (mcp.provider !== undefined && !(IDP_VALUES as readonly string[]).includes(mcp.provider)) report(at(path, 'provider'), `provider must be one of ${IDP_VALUES.join(', ')}`);
  if (mcp.clientId !== undefined && !isNonEmptyString(mcp.clientId)) report(at(path, 'clientId'), 'clientId must be a non-empty string');
  if (mcp.clientSecret !== undefined && typeof mcp.clientSecret !== 'string') report(at(path, 'clientSecret'), 'clientSecret must be a string (the resolved clientSecretRef)');
}

/** A PolicyBackendEndpoint: exactly one of `backendKey` (whose existence validate.ts checks) and `url`. */
function checkEndpoint(report: Report, path: IrPath, endpoint: OAuthTokenEndpointPolicy): void {
  if ((endpoint.backendKey === undefined) === (endpoint.url === undefined)) report(path, 'exactly one of backendKey and url must be set');
  else if (endpoint.url !== undefined && !URL.canParse(endpoint.url)) report(path, `url ${JSON.stringify(endpoint.url)} does not parse`);
}

function checkClientAuth(report: Report, at: At, path: IrPath, clientAuth: OAuthClientAuthPolicy): void {
  if (!isNonEmptyString(clientAuth.clientId)) report(at(path, 'clientId'), 'missing clientId');
  const method = clientAuth.method ?? 'ClientSecretBasic';
  if (!CLIENT_AUTH_METHODS.includes(method)) report(at(path, 'method'), `unknown method ${String(method)}`);
  if (method === 'ClientSecretBasic' && typeof clientAuth.secret !== 'string') report(at(path, 'secret'), 'ClientSecretBasic needs the resolved secretRef');
  if (method === 'PrivateKeyJwt') {
    const pk: unknown = clientAuth.privateKeyJwt;
    if (!isObject(pk)) report(at(path, 'privateKeyJwt'), 'PrivateKeyJwt needs privateKeyJwt');
    else {
      if (typeof pk.signingKey !== 'string') report(at(at(path, 'privateKeyJwt'), 'signingKey'), 'missing signing key (signingKeyRef unresolved)');
      if (!isNonEmptyString(pk.assertionAudience)) report(at(at(path, 'privateKeyJwt'), 'assertionAudience'), 'missing assertionAudience');
    }
  }
}

function checkCache(report: Report, at: At, path: IrPath, cache: OAuthTokenCachePolicy | undefined): void {
  const inMemory = cache?.inMemory;
  if (!inMemory) return;
  const p = at(path, 'inMemory');
  if (inMemory.maxEntries !== undefined && !(Number.isInteger(inMemory.maxEntries) && inMemory.maxEntries >= 0)) report(at(p, 'maxEntries'), `${String(inMemory.maxEntries)} is not a non-negative integer`);
  if (inMemory.defaultTtlMs !== undefined && !isNonNegative(inMemory.defaultTtlMs)) report(at(p, 'defaultTtlMs'), `${String(inMemory.defaultTtlMs)} is not a non-negative number of milliseconds`);
}

/** A credential location names exactly one place (header, query parameter, cookie). */
function checkLocation(report: Report, path: IrPath, location: CredentialLocation): void {
  const places = (['header', 'queryParameter', 'cookie', 'expression'] as const).filter((k) => location[k] !== undefined);
  if (places.length !== 1) report(path, `a location names exactly one of header, queryParameter, cookie; found ${places.length === 0 ? 'none' : places.join(', ')}`);
}
