import { compile, createActivation, type Activation, type Program } from '../../cel/index.ts';
import type { PolicyContext } from './context.ts';

/** Compile at config time; a bad expression throws, which marks the member invalid (fail closed). */
export function program(expression: string, what: string, expect?: readonly string[]): Program {
  const result = compile(expression, expect ? { expect } : undefined);
  if (!result.ok) throw new Error(`${what}: invalid CEL expression: ${result.error.message}`);
  return result.program;
}

/** One activation per request and phase; steps that change identity or body build a fresh one. */
export function activationOf(ctx: PolicyContext): Activation {
  return createActivation(ctx.cel());
}
