import { renderGatewayError, type GatewayError } from '../http/error-format.ts';

/**
 * A traffic policy step either lets the request go on (maybe changed) or answers it
 * (DESIGN.md error model). Answers carry their own status, headers and body.
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

export type PolicyResult = { readonly action: 'continue' } | { readonly action: 'respond'; readonly response: DirectResponse };

export const CONTINUE: PolicyResult = Object.freeze({ action: 'continue' });

export function respond(status: number, body?: string | Buffer, headers?: Record<string, string | readonly string[]>): PolicyResult {
  return { action: 'respond', response: { status, body, headers } };
}

/**
 * A gateway-made denial: the gateway's JSON error body (same shape as ProxyError bodies), and its
 * cause so a client of another format (OpenAI, Anthropic, JSON-RPC) gets it in its own.
 */
export function respondError(status: number, code: string, message: string, headers?: Record<string, string>): PolicyResult {
  const error = { code, message };
  return { action: 'respond', response: { status, body: renderGatewayError(status, error, 'gateway'), headers: { 'content-type': 'application/json', ...headers }, error } };
}
