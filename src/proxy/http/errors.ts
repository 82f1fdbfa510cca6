import { renderGatewayError, type ClientFormat, type GatewayError } from './error-format.ts';

/**
 * Every failure a client can see while proxying, in one union, mapped to status and body in one
 * function (DESIGN.md "Every error the user can see has one place").
 */
export type ProxyError =
  | { readonly code: 'LISTENER_NOT_FOUND'; readonly host: string }
  | { readonly code: 'ROUTE_NOT_FOUND' }
  /** TLS: the Host names a different listener than the SNI the connection was made for. */
  | { readonly code: 'MISDIRECTED_REQUEST'; readonly host: string; readonly sni: string }
  | { readonly code: 'NO_VALID_BACKEND'; readonly rule: string }
  | { readonly code: 'NO_HEALTHY_ENDPOINT'; readonly backend: string }
  | { readonly code: 'UPSTREAM_CONNECT_FAILED'; readonly backend: string; readonly cause: string }
  | { readonly code: 'UPSTREAM_RESET'; readonly backend: string; readonly cause: string }
  | { readonly code: 'REQUEST_TIMEOUT' }
  | { readonly code: 'BACKEND_TIMEOUT'; readonly backend: string }
  | { readonly code: 'BAD_REQUEST'; readonly reason: string }
  /** A policy needed the body buffered and it exceeded the limit (SPEC.md: 413 for requests). */
  | { readonly code: 'PAYLOAD_TOO_LARGE'; readonly limit: number }
  | { readonly code: 'INTERNAL'; readonly cause: string };

export interface ErrorResponse {
  readonly status: number;
  readonly body: string;
}

/** Status and machine-readable cause of a failure; rendered per client format by `toErrorResponse`. */
export interface ClassifiedError {
  readonly status: number;
  readonly error: GatewayError;
}

/**
 * The single place that decides what a client sees for a failure, in the client's format
 * (docs/errors.md). Messages never leak upstream addresses.
 */
export function toErrorResponse(e: ProxyError, format: ClientFormat = 'gateway'): ErrorResponse {
  const { status, error } = classify(e);
  return { status, body: renderGatewayError(status, error, format) };
}

export function classify(e: ProxyError): ClassifiedError {
  switch (e.code) {
    case 'LISTENER_NOT_FOUND':
      return of(404, 'route_not_found', 'no listener matches the requested host');
    case 'ROUTE_NOT_FOUND':
      return of(404, 'route_not_found', 'no route matches the request');
    case 'MISDIRECTED_REQUEST':
      return of(421, 'misdirected_request', 'the request host does not match the TLS server name of this connection');
    case 'NO_VALID_BACKEND':
      return of(500, 'no_valid_backend', 'the matched route has no valid backend');
    case 'NO_HEALTHY_ENDPOINT':
      return of(503, 'no_healthy_upstream', 'no ready endpoint for the backend');
    case 'UPSTREAM_CONNECT_FAILED':
      return of(502, 'upstream_connect_failed', 'could not connect to the upstream');
    case 'UPSTREAM_RESET':
      return of(502, 'upstream_reset', 'the upstream closed the connection before responding');
    case 'REQUEST_TIMEOUT':
      return of(504, 'request_timeout', 'the request timed out');
    case 'BACKEND_TIMEOUT':
      return of(504, 'upstream_timeout', 'the upstream did not respond in time');
    case 'BAD_REQUEST':
      return of(400, 'bad_request', e.reason);
    case 'PAYLOAD_TOO_LARGE':
      return of(413, 'payload_too_large', `the request body exceeds the ${e.limit}-byte buffer limit`);
    case 'INTERNAL':
      return of(500, 'internal_error', 'internal error');
  }
}

function of(status: number, code: string, message: string): ClassifiedError {
  return { status, error: { code, message } };
}

/** undici and node:net error codes that mean "never got a connection". */
const CONNECT_ERROR_CODES = new Set([
  'ECONNREFUSED', 'ENOTFOUND', 'EHOSTUNREACH', 'ENETUNREACH', 'EAI_AGAIN', 'UND_ERR_CONNECT_TIMEOUT', 'ETIMEDOUT',
]);
const TIMEOUT_ERROR_CODES = new Set(['UND_ERR_HEADERS_TIMEOUT', 'UND_ERR_BODY_TIMEOUT']);

/** Classify an upstream I/O error from undici or node:net. */
export function upstreamFailure(backend: string, err: unknown): ProxyError {
  const code = errorCode(err);
  if (CONNECT_ERROR_CODES.has(code)) return { code: 'UPSTREAM_CONNECT_FAILED', backend, cause: code };
  if (TIMEOUT_ERROR_CODES.has(code)) return { code: 'BACKEND_TIMEOUT', backend };
  // undici refused the request we built: our bug, not the upstream's.
  if (code === 'UND_ERR_INVALID_ARG') return { code: 'INTERNAL', cause: String(err) };
  return { code: 'UPSTREAM_RESET', backend, cause: code || String(err) };
}

export function isConnectFailure(e: ProxyError): boolean {
  return e.code === 'UPSTREAM_CONNECT_FAILED';
}

function errorCode(err: unknown): string {
  if (typeof err === 'object' && err !== null && 'code' in err && typeof err.code === 'string') return err.code;
  return '';
}
