/**
 * Cloud credentials (`auth.cloudA` SigV4 signing, `auth.cloudB` and `auth.cloudC` bearer tokens)
 * on upstream calls the gateway proxies rather than builds: Service and static backends
 * (compile.ts, forward.ts) and MCP targets (mcp/upstream/policy.ts). The mechanisms are the
 * shared ones AI providers use (policies/credentials/backend-credentials.ts); what is particular
 * here is what a proxied request is: the Host it is sent with, and a body that is usually
 * streamed, so SigV4 signs `UNSIGNED-PAYLOAD` as its payload hash unless the body is known.
 */
import type { BackendAuthPolicy } from '../../../ir/policy.ts';
import type { PolicyContext, RequestIdentity } from '../context.ts';
import { BackendCredentials, CredentialError, PLAIN_BACKEND, type PreparedCredentials } from '../credentials/backend-credentials.ts';
import { UNSIGNED_PAYLOAD } from '../credentials/sigv4.ts';
import { rewrittenHost } from '../traffic/host-rewrite/host.ts';

type Headers = Record<string, string | string[]>;

/** What signing and cloud tokens need of an upstream request beyond its headers and path. */
export interface UpstreamCall {
  readonly method: string;
  /** The Host header the request is sent with (`host` or `host:port`). */
  readonly host: string;
  /** The body as sent, or UNSIGNED_PAYLOAD when it is streamed. */
  readonly body: Uint8Array | typeof UNSIGNED_PAYLOAD;
}

/** Writes cloud credentials into one proxied request; a promise when a token or role session must be fetched. */
export type CloudCredentialWriter = (headers: Headers, path: string, ctx: PolicyContext | undefined, call: UpstreamCall | undefined) => PreparedCredentials | Promise<PreparedCredentials>;

/**
 * One credential source for every proxied backend of the process: tokens and assumed-role
 * sessions are cached across configurations (keyed by what obtained them), read from the
 * environment at request time.
 */
let shared: BackendCredentials | undefined;

/** Tests replace the environment the proxied backends' credentials read (undefined: back to process.env). */
export function setCloudCredentialsForTests(credentials: BackendCredentials | undefined): void {
  shared = credentials;
}

const NO_IDENTITY: RequestIdentity = Object.freeze({});
const EMPTY = new Uint8Array(0);

/** The writer for an auth that uses a cloud mechanism (usesCloudCredentials), compiled once per policy. */
export function compileCloudCredentials(auth: BackendAuthPolicy): CloudCredentialWriter {
  return (headers, path, ctx, call) => {
    // Without the request's method and host nothing can be signed or audienced: refuse, never send unsigned.
    if (call === undefined) return Promise.reject(new CredentialError('cloud credentials need the upstream request (method, host, body)'));
    shared ??= new BackendCredentials();
    try {
      return shared.apply({ host: call.host, method: call.method, path, headers, body: call.body }, auth, ctx?.identity ?? NO_IDENTITY, ctx ? () => ctx.cel() : undefined, PLAIN_BACKEND);
    } catch (err) {
      // Callers handle a refusal as a rejection (forward.ts answers it; nothing is sent).
      return Promise.reject(err);
    }
  };
}

/** What serviceCall reads of a forward (the pipeline's UpstreamForward; policies do not import the pipeline above them). */
export interface ForwardView {
  readonly headers: Readonly<Record<string, string | string[] | undefined>>;
  readonly target: { readonly authority: string };
  readonly filters: { readonly rewrite?: { readonly hostname?: string } };
}

/** A buffered request body, when a step read or replaced it (RequestPolicyContext keeps it). */
interface MaybeBuffered {
  readonly bufferedBody?: Buffer;
}

/**
 * The Service or static backend request as the Exchange will send it: the Host after
 * `hostRewrite` (the Exchange applies it after the credentials are written, the same way), and
 * the body when it is known — buffered by a policy, or absent — else UNSIGNED_PAYLOAD.
 */
export function serviceCall(fwd: ForwardView, ctx: PolicyContext | undefined): UpstreamCall {
  const headers = fwd.headers;
  let host = typeof headers.host === 'string' ? headers.host : fwd.target.authority;
  const mode = ctx?.upstream.hostRewrite;
  if (mode && !fwd.filters.rewrite?.hostname) {
    const client = ctx.downstreamHeaders[':authority'] ?? ctx.downstreamHeaders.host;
    host = rewrittenHost(mode, fwd.target.authority, typeof client === 'string' ? client : undefined) ?? host;
  }
  return { method: ctx?.method ?? 'GET', host, body: knownBody(ctx) };
}

function knownBody(ctx: PolicyContext | undefined): Uint8Array | typeof UNSIGNED_PAYLOAD {
  if (!ctx || ctx.upstream.bodyStream) return UNSIGNED_PAYLOAD;
  const buffered = (ctx as MaybeBuffered).bufferedBody;
  if (buffered) return buffered;
  const declared = ctx.downstreamHeaders['content-length'];
  if (declared === '0') return EMPTY;
  // Neither a length nor chunked framing means no body in HTTP/1.1, but HTTP/2 may stream one without either: only GET and HEAD count as bodiless.
  if (declared === undefined && ctx.downstreamHeaders['transfer-encoding'] === undefined && (ctx.method === 'GET' || ctx.method === 'HEAD')) return EMPTY;
  return UNSIGNED_PAYLOAD;
}

/** An MCP target request: the gateway builds it, so its body is known (a JSON-RPC message, or none for GET/DELETE). */
export function mcpCall(headers: Readonly<Headers>, method: string, origin: string, body: string | undefined): UpstreamCall {
  const host = typeof headers.host === 'string' ? headers.host : new URL(origin).host;
  return { method, host, body: body === undefined ? EMPTY : Buffer.from(body) };
}
