/**
 * A traffic policy step either lets the request go on (maybe changed) or answers it
 * (DESIGN.md error model). Answers carry their own status, headers and body.
 */
export interface DirectResponse {
  readonly status: number;
  readonly headers?: Readonly<Record<string, string | readonly string[]>>;
  readonly body?: string | Buffer;
}

export type PolicyResult = { readonly action: 'continue' } | { readonly action: 'respond'; readonly response: DirectResponse };

export const CONTINUE: PolicyResult = Object.freeze({ action: 'continue' });

export function respond(status: number, body?: string | Buffer, headers?: Record<string, string | readonly string[]>): PolicyResult {
  return { action: 'respond', response: { status, body, headers } };
}

/** The JSON error body every gateway-made denial uses (same shape as ProxyError bodies). */
export function respondError(status: number, code: string, message: string, headers?: Record<string, string>): PolicyResult {
  return respond(status, JSON.stringify({ error: { code, message } }), { 'content-type': 'application/json', ...headers });
}
