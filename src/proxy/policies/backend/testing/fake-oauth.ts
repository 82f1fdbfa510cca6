/**
 * A local enterprise identity provider and a resource authorization server for the OAuth backend
 * auth mechanisms, with real jose-signed JWTs and the checks the real servers make:
 *
 * - The IdP issues users' ID tokens (`idToken`). Its token endpoint takes RFC 8693 token
 *   exchanges, authenticated by client_secret_basic, client_secret_post or private_key_jwt:
 *   `requested_token_type` id-jag (draft-ietf-oauth-identity-assertion-authz-grant §4.3: the ID
 *   token verified, its `aud` equal to the authenticated client, `audience` the resource AS) gives
 *   an ID-JAG (`typ: oauth-id-jag+jwt`, client_id, resource, scope); any other requested type gives
 *   an access token for `audience`.
 * - The resource AS takes the RFC 7523 jwt-bearer grant with an ID-JAG (`typ`, `aud`, `client_id`
 *   equal to the authenticated client, signature by the IdP) and issues a signed access token.
 *
 * Every request is recorded (form, Authorization header). `failWith(status)` makes the next
 * answers fail with an OAuth error. A refused request is answered as RFC 6749 §5.2 says.
 */
import { generateKeyPairSync, verify as cryptoVerify, type KeyObject } from 'node:crypto';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { decodeProtectedHeader, jwtVerify, SignJWT, type JWTPayload } from 'jose';

export const ID_JAG_TYPE = 'urn:ietf:params:oauth:token-type:id-jag';
const GRANT_TOKEN_EXCHANGE = 'urn:ietf:params:oauth:grant-type:token-exchange';
const GRANT_JWT_BEARER = 'urn:ietf:params:oauth:grant-type:jwt-bearer';
const ID_TOKEN_TYPE = 'urn:ietf:params:oauth:token-type:id_token';
const CLIENT_ASSERTION_TYPE = 'urn:ietf:params:oauth:client-assertion-type:jwt-bearer';

export interface TokenRequest {
  readonly path: string;
  readonly form: Record<string, string>;
  readonly authorization: string | undefined;
}

/** A registered client: a secret (basic or post), or a public key for private_key_jwt. */
export interface RegisteredClient {
  readonly secret?: string;
  readonly publicKey?: KeyObject;
}

interface OAuthServer {
  readonly url: string;
  readonly issuer: string;
  readonly requests: TokenRequest[];
  /** The next `count` token requests fail with this status and OAuth error (default every one). */
  failWith(status: number, error?: string, count?: number): void;
  stop(): Promise<void>;
}

export interface FakeIdp extends OAuthServer {
  readonly publicKey: KeyObject;
  /** An ID token for `sub`, issued to `clientId` (its `aud`). */
  idToken(sub: string, clientId: string, claims?: JWTPayload): Promise<string>;
  /** The ID-JAGs issued so far (decoded claims and header typ). */
  readonly issuedGrants: { claims: JWTPayload; typ: string | undefined }[];
}

export interface FakeResourceAs extends OAuthServer {
  readonly publicKey: KeyObject;
  /** Verifies an access token this server issued; undefined when it did not. */
  verify(token: string): Promise<JWTPayload | undefined>;
}

class Refusal extends Error {
  readonly status: number;
  readonly error: string;
  constructor(status: number, error: string, description: string) {
    super(description);
    this.status = status;
    this.error = error;
  }
}

const keyPair = () => generateKeyPairSync('ec', { namedCurve: 'P-256' });

async function listen(handle: (path: string, form: URLSearchParams, headers: IncomingHttpHeaders) => Promise<Record<string, unknown>>, requests: TokenRequest[]) {
  let failure: { status: number; error: string; count: number } | undefined;
  const server: Server = createServer((req, res) => {
    let body = '';
    req.setEncoding('utf8').on('data', (c: string) => (body += c)).on('end', () => {
      const form = new URLSearchParams(body);
      requests.push({ path: req.url ?? '/', form: Object.fromEntries(form), authorization: req.headers.authorization });
      const answer = async () => {
        if (failure && failure.count > 0) {
          failure.count -= 1;
          throw new Refusal(failure.status, failure.error, 'failing on purpose');
        }
        if (req.method !== 'POST' || !String(req.headers['content-type']).startsWith('application/x-www-form-urlencoded')) throw new Refusal(400, 'invalid_request', 'POST a form');
        return handle(req.url ?? '/', form, req.headers);
      };
      answer().then(
        (json) => res.writeHead(200, { 'content-type': 'application/json', 'cache-control': 'no-store' }).end(JSON.stringify(json)),
        (err: unknown) => {
          const r = err instanceof Refusal ? err : new Refusal(500, 'server_error', String(err));
          res.writeHead(r.status, { 'content-type': 'application/json', 'cache-control': 'no-store' }).end(JSON.stringify({ error: r.error, error_description: r.message }));
        },
      );
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url,
    failWith(status: number, error = 'temporarily_unavailable', count = Number.MAX_SAFE_INTEGER) {
      failure = { status, error, count };
    },
    stop: () => new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    }),
  };
}

/** RFC 6749 §2.3.1 basic or post, or RFC 7523 §2.2 private_key_jwt (audience: the token endpoint URL). Returns the client id. */
async function authenticateClient(form: URLSearchParams, headers: IncomingHttpHeaders, clients: Readonly<Record<string, RegisteredClient>>, endpoint: string): Promise<string> {
  const basic = /^Basic (.+)$/i.exec(headers.authorization ?? '');
  if (basic) {
    const [id, secret] = Buffer.from(basic[1], 'base64').toString('utf8').split(':').map(decodeURIComponent);
    if (clients[id]?.secret === undefined || clients[id].secret !== secret) throw new Refusal(401, 'invalid_client', 'bad client credentials (basic)');
    return id;
  }
  const id = form.get('client_id') ?? '';
  if (form.get('client_assertion_type') === CLIENT_ASSERTION_TYPE) {
    const key = clients[id]?.publicKey;
    if (!key) throw new Refusal(401, 'invalid_client', 'no key registered for this client');
    try {
      await jwtVerify(form.get('client_assertion') ?? '', key, { issuer: id, subject: id, audience: endpoint });
    } catch (err) {
      throw new Refusal(401, 'invalid_client', `client assertion: ${(err as Error).message}`);
    }
    return id;
  }
  if (clients[id]?.secret === undefined || clients[id].secret !== form.get('client_secret')) throw new Refusal(401, 'invalid_client', 'bad client credentials (post)');
  return id;
}

/**
 * `clients`: registrations at the IdP. `resourceClientIds`: per registered client, its client id at
 * the resource AS (the draft's client id mapping, §5), written as the ID-JAG's `client_id`.
 */
export async function startFakeIdp(clients: Readonly<Record<string, RegisteredClient>>, resourceClientIds: Readonly<Record<string, string>> = {}): Promise<FakeIdp> {
  const { privateKey, publicKey } = keyPair();
  const requests: TokenRequest[] = [];
  const issuedGrants: FakeIdp['issuedGrants'] = [];
  let issuer = '';
  let serial = 0;
  const base = await listen(async (path, form, headers) => {
    if (path !== '/oauth2/token') throw new Refusal(404, 'invalid_request', 'no such endpoint');
    const client = await authenticateClient(form, headers, clients, `${issuer}/oauth2/token`);
    if (form.get('grant_type') !== GRANT_TOKEN_EXCHANGE) throw new Refusal(400, 'unsupported_grant_type', 'token exchange only');
    const audience = form.get('audience');
    if (!audience) throw new Refusal(400, 'invalid_request', 'audience is required');
    let subject: JWTPayload;
    try {
      subject = (await jwtVerify(form.get('subject_token') ?? '', publicKey, { issuer })).payload;
    } catch (err) {
      throw new Refusal(400, 'invalid_grant', `subject token: ${(err as Error).message}`);
    }
    const now = Math.floor(Date.now() / 1000);
    const scope = form.get('scope') ?? undefined;
    const resources = form.getAll('resource');
    if (form.get('requested_token_type') === ID_JAG_TYPE) {
      if (form.get('subject_token_type') !== ID_TOKEN_TYPE) throw new Refusal(400, 'invalid_request', 'an ID token is expected');
      if (subject.aud !== client) throw new Refusal(400, 'invalid_grant', 'the ID token was not issued to this client');
      const claims: JWTPayload = {
        client_id: resourceClientIds[client] ?? client, ...(scope ? { scope } : {}),
        ...(resources.length > 0 ? { resource: resources.length === 1 ? resources[0] : resources } : {}),
      };
      const grant = await new SignJWT(claims).setProtectedHeader({ alg: 'ES256', typ: 'oauth-id-jag+jwt' })
        .setIssuer(issuer).setSubject(subject.sub ?? '').setAudience(audience).setJti(`jag-${++serial}`).setIssuedAt(now).setExpirationTime(now + 300).sign(privateKey);
      issuedGrants.push({ claims: { ...claims, iss: issuer, sub: subject.sub, aud: audience }, typ: 'oauth-id-jag+jwt' });
      return { issued_token_type: ID_JAG_TYPE, access_token: grant, token_type: 'N_A', expires_in: 300, ...(scope ? { scope } : {}) };
    }
    const token = await new SignJWT({ ...(scope ? { scope } : {}) }).setProtectedHeader({ alg: 'ES256', typ: 'at+jwt' })
      .setIssuer(issuer).setSubject(subject.sub ?? '').setAudience(audience).setJti(`at-${++serial}`).setIssuedAt(now).setExpirationTime(now + 600).sign(privateKey);
    return { issued_token_type: 'urn:ietf:params:oauth:token-type:access_token', access_token: token, token_type: 'Bearer', expires_in: 600 };
  }, requests);
  issuer = base.url;
  return {
    ...base, issuer, requests, publicKey, issuedGrants,
    idToken: (sub, clientId, claims = {}) => {
      const now = Math.floor(Date.now() / 1000);
      return new SignJWT(claims).setProtectedHeader({ alg: 'ES256', typ: 'JWT' }).setIssuer(issuer).setSubject(sub).setAudience(clientId).setIssuedAt(now).setExpirationTime(now + 3600).sign(privateKey);
    },
  };
}

/** A resource authorization server trusting `idpKey` for ID-JAGs; `clients` are registrations here. */
export async function startFakeResourceAs(idp: { issuer: string; publicKey: KeyObject }, clients: Readonly<Record<string, RegisteredClient>>): Promise<FakeResourceAs> {
  const { privateKey, publicKey } = keyPair();
  const requests: TokenRequest[] = [];
  let issuer = '';
  let serial = 0;
  const base = await listen(async (path, form, headers) => {
    if (path !== '/token') throw new Refusal(404, 'invalid_request', 'no such endpoint');
    const client = await authenticateClient(form, headers, clients, `${issuer}/token`);
    if (form.get('grant_type') !== GRANT_JWT_BEARER) throw new Refusal(400, 'unsupported_grant_type', 'jwt-bearer only');
    const assertion = form.get('assertion') ?? '';
    let claims: JWTPayload;
    try {
      if (decodeProtectedHeader(assertion).typ !== 'oauth-id-jag+jwt') throw new Error('typ is not oauth-id-jag+jwt');
      claims = (await jwtVerify(assertion, idp.publicKey, { issuer: idp.issuer, audience: issuer, typ: 'oauth-id-jag+jwt' })).payload;
    } catch (err) {
      throw new Refusal(400, 'invalid_grant', `assertion: ${(err as Error).message}`);
    }
    if (claims.client_id !== client) throw new Refusal(400, 'invalid_grant', 'the ID-JAG was issued for another client');
    const now = Math.floor(Date.now() / 1000);
    const token = await new SignJWT({ scope: claims.scope, client_id: client }).setProtectedHeader({ alg: 'ES256', typ: 'at+jwt' })
      .setIssuer(issuer).setSubject(claims.sub ?? '').setAudience(String(claims.resource ?? issuer)).setJti(`rat-${++serial}`).setIssuedAt(now).setExpirationTime(now + 3600).sign(privateKey);
    return { token_type: 'Bearer', access_token: token, expires_in: 3600, ...(typeof claims.scope === 'string' ? { scope: claims.scope } : {}) };
  }, requests);
  issuer = base.url;
  return {
    ...base, issuer, requests, publicKey,
    verify: async (token) => {
      try {
        return (await jwtVerify(token, publicKey, { issuer })).payload;
      } catch {
        return undefined;
      }
    },
  };
}

/**
 * Checks an ES256 JWT synchronously (for mocks that must answer at once): the signature (JOSE's
 * raw r||s form), issuer, audience when given, and expiry. Its claims, or undefined.
 */
export function verifyEs256Sync(token: string, key: KeyObject, issuer: string, audience?: string): Record<string, unknown> | undefined {
  const [header, payload, signature] = token.split('.');
  if (!header || !payload || !signature) return undefined;
  if (!cryptoVerify('sha256', Buffer.from(`${header}.${payload}`), { key, dsaEncoding: 'ieee-p1363' }, Buffer.from(signature, 'base64url'))) return undefined;
  const claims = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) as Record<string, unknown>;
  if (claims.iss !== issuer || typeof claims.exp !== 'number' || claims.exp * 1000 < Date.now()) return undefined;
  if (audience !== undefined && claims.aud !== audience) return undefined;
  return claims;
}
