import type { IncomingHttpHeaders, IncomingMessage, OutgoingHttpHeaders } from 'node:http';
import type { Http2ServerRequest } from 'node:http2';
import type { Readable } from 'node:stream';
import type { TLSSocket } from 'node:tls';
import { classify, toErrorResponse, type ProxyError } from './errors.ts';
import type { HeaderMap } from './headers.ts';
import { renderGatewayError, type ClientFormat, type GatewayError } from './error-format.ts';

/**
 * A response the gateway makes itself instead of forwarding (a policy's answer, a refusal):
 * written by `sendDirect`. Traffic policy steps return it (policies/result.ts), which is why its
 * doc speaks of them; it lives here, below the policies, because every layer writes one.
 */
export interface DirectResponse {
  readonly status: number;
  readonly headers?: Readonly<Record<string, string | readonly string[]>>;
  readonly body?: string | Buffer;
  /**
   * Set on the gateway's own refusals (401, 403, 429, 413, 500 …): the machine-readable cause the
   * pipeline renders in the client's format (docs/errors.md), replacing `body`. Answers whose body
   * a user or an external service wrote (directResponse, an ext_authz denial) never have it.
   */
  readonly error?: GatewayError;
}

/** A change to the response headers, run when the upstream (or a policy) answers. */
export type ResponseMutation = (headers: HeaderMap, status: number) => void;

/** The client side of an exchange: node's HTTP/1 request or the HTTP/2 compatibility request. */
export type DownstreamRequest = IncomingMessage | Http2ServerRequest;

/** What we use of node's ServerResponse and Http2ServerResponse (both satisfy it). */
export interface DownstreamResponse {
  readonly headersSent: boolean;
  readonly writableEnded: boolean;
  writeHead(status: number, headers: OutgoingHttpHeaders): unknown;
  write(chunk: Buffer): boolean;
  end(): unknown;
  end(chunk: string): unknown;
  addTrailers(headers: OutgoingHttpHeaders): void;
  destroy(error?: Error): unknown;
  once(event: 'drain', listener: () => void): unknown;
  on(event: 'close', listener: () => void): unknown;
  /**
   * Present on the pipeline's wrapper around an in-process handler's response
   * (pipeline/handler-response.ts): the next head is the gateway's own refusal or failure, so
   * response filters (transformation `response.body`, ext_proc) skip it. Node's responses lack it.
   */
  gatewayAnswer?(): void;
}

/** Does the request carry a body we must stream upstream? */
export function hasRequestBody(req: DownstreamRequest): boolean {
  if ('stream' in req) return !req.stream.endAfterHeaders && req.headers['content-length'] !== '0';
  const length = req.headers['content-length'];
  return req.headers['transfer-encoding'] !== undefined || (length !== undefined && length !== '0');
}

export function requestBody(req: DownstreamRequest): Readable | null {
  return hasRequestBody(req) ? req : null;
}

export function serverName(req: DownstreamRequest): string | undefined {
  const name = (req.socket as Partial<TLSSocket>).servername;
  return typeof name === 'string' && name !== '' ? name : undefined;
}

export function requestHeaders(req: DownstreamRequest): IncomingHttpHeaders {
  return req.headers;
}

/** Answer with the error body in the client's format; if the response already started, all we can do is cut it. */
export function sendError(res: DownstreamResponse, error: ProxyError, format: ClientFormat = 'gateway'): number {
  const { status, body } = toErrorResponse(error, format);
  if (res.headersSent) {
    res.destroy();
    return status;
  }
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
  res.end(body);
  return status;
}

/**
 * A gateway failure after routing, answered like a policy's refusal: in the client's format, with
 * the response effects (CORS, header modifiers) the request's policies registered.
 */
export function sendGatewayError(res: DownstreamResponse, e: ProxyError, mutations: readonly ResponseMutation[], format: ClientFormat): number {
  const { status, error } = classify(e);
  return sendDirect(res, { status, error, headers: { 'content-type': 'application/json' }, body: renderGatewayError(status, error, 'gateway') }, mutations, format);
}

export function sendRedirect(res: DownstreamResponse, status: number, location: string): void {
  res.writeHead(status, { location, 'content-length': 0 });
  res.end();
}

/**
 * A response made by the gateway (a policy's answer); response-phase mutations still apply. A
 * gateway refusal (`response.error`) is rendered in the client's format; a body a user or an
 * external service wrote is sent as it is.
 */
export function sendDirect(res: DownstreamResponse, response: DirectResponse, mutations: readonly ResponseMutation[], format: ClientFormat = 'gateway'): number {
  const rendered = format !== 'gateway' && response.error !== undefined;
  const body = rendered ? renderGatewayError(response.status, response.error!, format) : response.body ?? '';
  const headers: HeaderMap = {};
  for (const [name, value] of Object.entries(response.headers ?? {})) headers[name.toLowerCase()] = typeof value === 'string' ? value : [...value];
  if (rendered) headers['content-type'] = 'application/json';
  for (const mutate of mutations) mutate(headers, response.status);
  headers['content-length'] = String(Buffer.byteLength(body));
  if (res.headersSent) {
    res.destroy();
    return response.status;
  }
  res.writeHead(response.status, headers);
  if (typeof body === 'string') {
    res.end(body);
  } else {
    res.write(body);
    res.end();
  }
  return response.status;
}
