import { compile, createActivation, type Activation, type Program } from '../../cel/index.ts';
import type { PolicyContext } from './context.ts';

/** What activationOf reads of a request: any PolicyContext, or a lighter view of one (backend auth on in-process handlers). */
export type CelSource = Pick<PolicyContext, 'identity' | 'cel' | 'celCache'>;

/** Compile at config time; a bad expression throws, which marks the member invalid (fail closed). */
export function program(expression: string, what: string, expect?: readonly string[]): Program {
  const result = compile(expression, expect ? { expect } : undefined);
  if (!result.ok) throw new Error(`${what}: invalid CEL expression: ${result.error.message}`);
  return result.program;
}

/**
 * The request's activation, built once and shared by every step until an authentication or
 * external-service step sets a new identity or the body is replaced (building an activation
 * costs more than most evaluations). Kept on the context itself: a WeakMap keyed by the context
 * made every request an ephemeron for the garbage collector.
 */
export function activationOf(ctx: CelSource): Activation {
  const id = ctx.identity;
  const body = 'bufferedBody' in ctx ? ctx.bufferedBody : undefined;
  const cached = ctx.celCache;
  if (cached !== undefined && cached.jwt === id.jwt && cached.apiKey === id.apiKey && cached.basicAuth === id.basicAuth
    && cached.extauthz === id.extauthz && cached.extproc === id.extproc && cached.body === body) {
    return cached.activation as Activation;
  }
  const activation = createActivation(ctx.cel());
  ctx.celCache = { activation, jwt: id.jwt, apiKey: id.apiKey, basicAuth: id.basicAuth, extauthz: id.extauthz, extproc: id.extproc, body };
  return activation;
}
