import type { DirectResponse } from '../http/downstream.ts';
import { renderGatewayError } from '../http/error-format.ts';

/**
 * A traffic policy step either lets the request go on (maybe changed) or answers it
 * (DESIGN.md error model). Answers carry their own status, headers and body: a DirectResponse,
 * declared in http/downstream.ts below the policies because every layer writes one.
 */
export type { DirectResponse };

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
