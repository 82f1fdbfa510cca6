import type { VariableName } from './environment.ts';
import { asBytes, newMap, toCel } from './values.ts';

/**
 * What the proxy knows about a request, in plain JavaScript shapes, and its conversion into the
 * values CEL expressions see. Build one activation per request (or per phase) and evaluate every
 * expression against it. A body can be handed over as a function so it is read only if used.
 */

/** Node's IncomingHttpHeaders shape; names may be in any case. */
export type HeaderInput = Readonly<Record<string, string | readonly string[] | undefined>>;

/** A body already buffered, or a function that returns it (called at most once, when used). */
export type BodyInput = Uint8Array | string | (() => Uint8Array | string | undefined);

export interface RequestInput {
  method: string;
  /** The request target: path plus query, e.g. `/v1/chat?x=1`. */
  url: string;
  host?: string;
  scheme?: string;
  /** `HTTP/1.1`, `HTTP/2` … */
  version?: string;
  headers?: HeaderInput;
  body?: BodyInput;
  /** When the request arrived (Date or epoch milliseconds). */
  startTime?: Date | number;
}

export interface SourceInput {
  address: string;
  port: number;
  /** Present for mutual TLS: the client certificate's identity (SPIFFE URI SAN when present). */
  identity?: string;
  subjectAltNames?: readonly string[];
  subject?: string;
  issuer?: string;
}

export interface ApiKeyInput {
  name: string;
  metadata?: unknown;
}

export interface LlmInput {
  requestModel?: string;
  responseModel?: string;
  provider?: string;
  inputTokens?: number;
  outputTokens?: number;
  totalTokens?: number;
  streaming?: boolean;
}

export interface McpItemInput {
  name: string;
  /** The MCP target (upstream server) serving the item. */
  target?: string;
}

export interface McpInput {
  method?: string;
  target?: string;
  tool?: McpItemInput;
  prompt?: McpItemInput;
  resource?: McpItemInput;
}

/** An A2A JSON-RPC call (src/proxy/a2a/cel-input.ts); fields the request does not carry are absent. */
export interface A2aInput {
  method?: string;
  taskId?: string;
  contextId?: string;
  skill?: string;
}

export interface ResponseInput {
  code: number;
  headers?: HeaderInput;
  body?: BodyInput;
}

export interface NamedInput {
  name: string;
  namespace?: string;
}

export interface CelInput {
  request?: RequestInput;
  source?: SourceInput;
  jwt?: Readonly<Record<string, unknown>>;
  apiKey?: ApiKeyInput;
  basicAuth?: { user: string };
  llm?: LlmInput;
  mcp?: McpInput;
  a2a?: A2aInput;
  response?: ResponseInput;
  backend?: NamedInput & { type?: string; protocol?: string };
  route?: NamedInput & { rule?: string };
  gateway?: NamedInput & { listener?: string };
  extauthz?: Readonly<Record<string, unknown>>;
  extproc?: Readonly<Record<string, unknown>>;
}

/** The values an expression is evaluated against; build with createActivation. */
export type Activation = Readonly<Record<VariableName, Record<string, unknown>>> & { readonly __activation: true };

type CelMap = Record<string, unknown>;

/**
 * Performance notes (the activation is built per request): maps with our own fixed keys are
 * plain object literals, which V8 creates fast (literals with getters are ~50x slower, so
 * headers and query are converted eagerly: a few hundred nanoseconds); cel-js treats an
 * undefined value as an absent key; an absent variable shares one frozen empty map. Only maps
 * whose keys come from outside (claims, metadata) use a null prototype, via toCel.
 */
const EMPTY: CelMap = Object.freeze(newMap());

function memo<T>(compute: () => T): () => T {
  let done = false;
  let value: T;
  return () => {
    if (!done) {
      value = compute();
      done = true;
    }
    return value;
  };
}

function int(n: number | undefined): bigint | undefined {
  return n === undefined || !Number.isFinite(n) ? undefined : BigInt(Math.trunc(n));
}

/** Shared by every request without headers or query; expressions cannot mutate maps. */
const NO_ENTRIES: ReadonlyMap<string, string> = new Map();

/** Lower-case names; repeated headers joined with ", " as HTTP allows (RFC 9110 §5.3). */
export function headerMap(headers: HeaderInput): Map<string, string> {
  const out = new Map<string, string>();
  for (const name of Object.keys(headers)) {
    const value = headers[name];
    if (value === undefined) continue;
    const text = typeof value === 'string' ? value : value.join(', ');
    const key = name.toLowerCase();
    const previous = out.get(key);
    out.set(key, previous === undefined ? text : `${previous}, ${text}`);
  }
  return out;
}

/**
 * The headers as CEL sees them, without a copy when they already have that shape: node's
 * IncomingMessage.headers has lowercase names and (request side, save set-cookie) string values.
 * Anything else (mixed-case names, repeated values as arrays) goes through headerMap.
 */
function headerView(headers: HeaderInput): ReadonlyMap<string, string> | HeaderInput {
  for (const name in headers) {
    const value = headers[name];
    if (typeof value !== 'string' || !isLowerCase(name)) return headerMap(headers);
  }
  return headers;
}

function isLowerCase(name: string): boolean {
  for (let i = 0; i < name.length; i++) {
    const c = name.charCodeAt(i);
    if (c >= 65 && c <= 90) return false;
  }
  return true;
}

/** The first value of each query parameter, percent-decoded. */
function queryMap(search: string): Map<string, string> {
  const out = new Map<string, string>();
  for (const [k, v] of new URLSearchParams(search)) if (!out.has(k)) out.set(k, v);
  return out;
}

function bodyBytes(body: BodyInput): Uint8Array | undefined {
  const value = typeof body === 'function' ? body() : body;
  if (value === undefined) return undefined;
  return typeof value === 'string' ? asBytes(Buffer.from(value, 'utf8')) : asBytes(value);
}

/**
 * A body given as bytes or text is converted now; one given as a function becomes a getter that
 * calls it on first read (an accessor costs about a microsecond to create, so only then).
 */
function attachBody(target: CelMap, raw: BodyInput | undefined): CelMap {
  if (typeof raw === 'function') {
    const body = memo(() => bodyBytes(raw));
    Object.defineProperty(target, 'body', { get: body, enumerable: true, configurable: true });
  } else if (raw !== undefined) target.body = bodyBytes(raw);
  return target;
}

function requestMap(r: RequestInput): CelMap {
  const queryAt = r.url.indexOf('?');
  return attachBody({
    method: r.method,
    uri: r.url,
    path: queryAt < 0 ? r.url : r.url.slice(0, queryAt),
    host: r.host,
    scheme: r.scheme,
    version: r.version,
    headers: r.headers === undefined ? NO_ENTRIES : headerView(r.headers),
    query: queryAt < 0 ? NO_ENTRIES : queryMap(r.url.slice(queryAt + 1)),
    startTime: r.startTime === undefined || r.startTime instanceof Date ? r.startTime : new Date(r.startTime),
  }, r.body);
}

/** A dual-stack socket reports IPv4 peers as ::ffff:a.b.c.d; expressions should see a.b.c.d. */
function unmapIPv4(address: string): string {
  return address.startsWith('::ffff:') && address.includes('.') ? address.slice(7) : address;
}

function sourceMap(s: SourceInput): CelMap {
  return {
    address: unmapIPv4(s.address),
    port: BigInt(s.port),
    identity: s.identity,
    subjectAltNames: s.subjectAltNames ? [...s.subjectAltNames] : undefined,
    subject: s.subject,
    issuer: s.issuer,
  };
}

function apiKeyMap(k: ApiKeyInput): CelMap {
  const out = newMap();
  const metadata = toCel(k.metadata);
  // SPEC: key metadata is usable as apiKey.<field>; name and metadata themselves take precedence.
  if (metadata !== null && typeof metadata === 'object' && !Array.isArray(metadata) && !(metadata instanceof Uint8Array)) {
    Object.assign(out, metadata);
  }
  out.name = k.name;
  if (metadata !== undefined) out.metadata = metadata;
  return out;
}

function llmMap(l: LlmInput): CelMap {
  const total = l.totalTokens ?? (l.inputTokens !== undefined && l.outputTokens !== undefined ? l.inputTokens + l.outputTokens : undefined);
  return {
    requestModel: l.requestModel,
    responseModel: l.responseModel,
    provider: l.provider,
    inputTokens: int(l.inputTokens),
    outputTokens: int(l.outputTokens),
    totalTokens: int(total),
    streaming: l.streaming,
  };
}

function mcpItem(item: McpItemInput | undefined, target: string | undefined): CelMap | undefined {
  return item === undefined ? undefined : { name: item.name, target: item.target ?? target };
}

function mcpMap(m: McpInput): CelMap {
  return {
    method: m.method,
    target: m.target,
    tool: mcpItem(m.tool, m.target),
    prompt: mcpItem(m.prompt, m.target),
    resource: mcpItem(m.resource, m.target),
  };
}

function responseMap(r: ResponseInput): CelMap {
  return attachBody({ code: BigInt(r.code), headers: r.headers === undefined ? NO_ENTRIES : headerView(r.headers) }, r.body);
}

function named(n: NamedInput | undefined): CelMap {
  return n === undefined ? EMPTY : { ...n };
}

function plain(input: object | undefined): CelMap {
  return input === undefined ? EMPTY : (toCel(input) as CelMap);
}

/**
 * Every variable is always present: one the request does not have (no JWT, not an LLM route) is
 * an empty map, so `has(jwt.sub)` is false and `jwt.sub` fails as a missing key, never as an
 * unknown variable.
 */
export function createActivation(input: CelInput): Activation {
  const activation: Record<VariableName, CelMap> = {
    request: input.request ? requestMap(input.request) : EMPTY,
    source: input.source ? sourceMap(input.source) : EMPTY,
    jwt: plain(input.jwt),
    apiKey: input.apiKey ? apiKeyMap(input.apiKey) : EMPTY,
    basicAuth: input.basicAuth ? { user: input.basicAuth.user } : EMPTY,
    llm: input.llm ? llmMap(input.llm) : EMPTY,
    mcp: input.mcp ? mcpMap(input.mcp) : EMPTY,
    a2a: input.a2a ? { ...input.a2a } : EMPTY,
    response: input.response ? responseMap(input.response) : EMPTY,
    backend: named(input.backend),
    route: named(input.route),
    gateway: named(input.gateway),
    extauthz: plain(input.extauthz),
    extproc: plain(input.extproc),
  };
  return activation as Activation;
}
