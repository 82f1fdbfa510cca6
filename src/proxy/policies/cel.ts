import { compile, createActivation, type Activation, type Program } from '../../cel/index.ts';
import type { PolicyContext } from './context.ts';

/** Compile at config time; a bad expression throws, which marks the member invalid (fail closed). */
export function program(expression: string, what: string, expect?: readonly string[]): Program {
  const result = compile(expression, expect ? { expect } : undefined);
  if (!result.ok) throw new Error(`${what}: invalid CEL expression: ${result.error.message}`);
  return result.program;
}

interface CachedActivation {
  readonly identity: readonly unknown[];
  readonly activation: Activation;
}

const activations = new WeakMap<PolicyContext, CachedActivation>();

/**
 * What of a request CEL sees that steps may change: a step that establishes an identity replaces
 * its object, and a body rewrite replaces the buffer (the activation reads a body only once).
 */
function identityOf(ctx: PolicyContext): readonly unknown[] {
  const id = ctx.identity;
  const body = 'bufferedBody' in ctx ? ctx.bufferedBody : undefined;
  return [id.jwt, id.apiKey, id.basicAuth, id.extauthz, id.extproc, body];
}

/**
 * The request's activation, built once and shared by every step until an authentication or
 * external-service step sets a new identity or the body is replaced (building an activation
 * costs more than most evaluations).
 */
export function activationOf(ctx: PolicyContext): Activation {
  const identity = identityOf(ctx);
  const cached = activations.get(ctx);
  if (cached && cached.identity.every((v, i) => v === identity[i])) return cached.activation;
  const activation = createActivation(ctx.cel());
  activations.set(ctx, { identity, activation });
  return activation;
}
