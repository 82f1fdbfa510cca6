import type { VariableName } from './environment.ts';
import { asBytes, newMap, toCel } from './values.ts';

/**
 * What the proxy knows about a request, in plain JavaScript shapes, and its conversion into the
 * values CEL expressions see. Build one activation per request (or per phase) and evaluate every
 * expression against it: expensive parts (headers, query, bodies) are converted on first use only.
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

/** Defines `key` on `target` as computed on first read, then cached; an undefined result leaves the key absent. */
function lazy(target: CelMap, key: string, compute: () => unknown): void {
  Object.defineProperty(target, key, {
    enumerable: true,
    configurable: true,
    get() {
      const value = compute();
      if (value === undefined) delete target[key];
      else Object.defineProperty(target, key, { value, enumerable: true, configurable: true });
      return value;
    },
  });
}

function set(target: CelMap, key: string, value: unknown): void {
  if (value !== undefined) target[key] = value;
}

function int(n: number | undefined): bigint | undefined {
  return n === undefined || !Number.isFinite(n) ? undefined : BigInt(Math.trunc(n));
}

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

function requestMap(r: RequestInput): CelMap {
  const out = newMap();
  const queryAt = r.url.indexOf('?');
  out.method = r.method;
  out.uri = r.url;
  out.path = queryAt < 0 ? r.url : r.url.slice(0, queryAt);
  set(out, 'host', r.host);
  set(out, 'scheme', r.scheme);
  set(out, 'version', r.version);
  const headers = r.headers;
  if (headers !== undefined) lazy(out, 'headers', () => headerMap(headers));
  else out.headers = new Map();
  lazy(out, 'query', () => queryMap(queryAt < 0 ? '' : r.url.slice(queryAt + 1)));
  const body = r.body;
  if (body !== undefined) lazy(out, 'body', () => bodyBytes(body));
  if (r.startTime !== undefined) out.startTime = r.startTime instanceof Date ? r.startTime : new Date(r.startTime);
  return out;
}

/** A dual-stack socket reports IPv4 peers as ::ffff:a.b.c.d; expressions should see a.b.c.d. */
function unmapIPv4(address: string): string {
  return address.startsWith('::ffff:') && address.includes('.') ? address.slice(7) : address;
}

function sourceMap(s: SourceInput): CelMap {
  const out = newMap();
  out.address = unmapIPv4(s.address);
  out.port = BigInt(s.port);
  set(out, 'identity', s.identity);
  set(out, 'subjectAltNames', s.subjectAltNames ? [...s.subjectAltNames] : undefined);
  set(out, 'subject', s.subject);
  set(out, 'issuer', s.issuer);
  return out;
}

function apiKeyMap(k: ApiKeyInput): CelMap {
  const out = newMap();
  const metadata = toCel(k.metadata);
  // SPEC: key metadata is usable as apiKey.<field>; name and metadata themselves take precedence.
  if (metadata !== null && typeof metadata === 'object' && !Array.isArray(metadata) && !(metadata instanceof Uint8Array)) {
    Object.assign(out, metadata);
  }
  out.name = k.name;
  set(out, 'metadata', metadata);
  return out;
}

function llmMap(l: LlmInput): CelMap {
  const out = newMap();
  set(out, 'requestModel', l.requestModel);
  set(out, 'responseModel', l.responseModel);
  set(out, 'provider', l.provider);
  set(out, 'inputTokens', int(l.inputTokens));
  set(out, 'outputTokens', int(l.outputTokens));
  const total = l.totalTokens ?? (l.inputTokens !== undefined && l.outputTokens !== undefined ? l.inputTokens + l.outputTokens : undefined);
  set(out, 'totalTokens', int(total));
  set(out, 'streaming', l.streaming);
  return out;
}

function mcpMap(m: McpInput): CelMap {
  const out = newMap();
  set(out, 'method', m.method);
  set(out, 'target', m.target);
  for (const kind of ['tool', 'prompt', 'resource'] as const) {
    const item = m[kind];
    if (item === undefined) continue;
    const entry = newMap();
    entry.name = item.name;
    set(entry, 'target', item.target ?? m.target);
    out[kind] = entry;
  }
  return out;
}

function responseMap(r: ResponseInput): CelMap {
  const out = newMap();
  out.code = BigInt(r.code);
  const headers = r.headers;
  if (headers !== undefined) lazy(out, 'headers', () => headerMap(headers));
  else out.headers = new Map();
  const body = r.body;
  if (body !== undefined) lazy(out, 'body', () => bodyBytes(body));
  return out;
}

function plain(input: object | undefined): CelMap {
  return input === undefined ? newMap() : (toCel(input) as CelMap);
}

/**
 * Every variable is always present: one the request does not have (no JWT, not an LLM route) is
 * an empty map, so `has(jwt.sub)` is false and `jwt.sub` fails as a missing key, never as an
 * unknown variable.
 */
export function createActivation(input: CelInput): Activation {
  const activation: Record<VariableName, CelMap> = {
    request: input.request ? requestMap(input.request) : newMap(),
    source: input.source ? sourceMap(input.source) : newMap(),
    jwt: plain(input.jwt),
    apiKey: input.apiKey ? apiKeyMap(input.apiKey) : newMap(),
    basicAuth: plain(input.basicAuth),
    llm: input.llm ? llmMap(input.llm) : newMap(),
    mcp: input.mcp ? mcpMap(input.mcp) : newMap(),
    response: input.response ? responseMap(input.response) : newMap(),
    backend: plain(input.backend),
    route: plain(input.route),
    gateway: plain(input.gateway),
    extauthz: plain(input.extauthz),
    extproc: plain(input.extproc),
  };
  return activation as Activation;
}
