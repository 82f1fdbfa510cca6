/**
 * Whether a request is traced (SPEC.md frontend `tracing`): `randomSampling` starts a trace for a
 * request that carries none (never when unset); `clientSampling` applies to a request whose
 * `traceparent` says the client sampled it (always when unset). A client that sent a trace it did
 * not sample (flags 00) is followed: parent-based, no span. Both take a CEL expression yielding a
 * ratio 0.0-1.0 or a boolean; a literal is decided at config time, anything else per request
 * (a failing expression does not trace: tracing never refuses a request).
 */
import { compile, createActivation, type Program } from '../../../cel/index.ts';
import type { Activation } from '../../../cel/index.ts';

export type Sampling =
  | { readonly kind: 'ratio'; readonly ratio: number }
  | { readonly kind: 'cel'; readonly program: Program };

export const ALWAYS: Sampling = { kind: 'ratio', ratio: 1 };
export const NEVER: Sampling = { kind: 'ratio', ratio: 0 };

const LITERAL = /^\s*(?:(true|false)|(\d+(?:\.\d*)?|\.\d+))\s*$/;

/** Compiles one sampling expression; undefined (reported through `onError`) when it does not compile. */
export function compileSampling(expression: string | undefined, unset: Sampling, onError: (message: string) => void): Sampling {
  if (expression === undefined) return unset;
  const literal = LITERAL.exec(expression);
  if (literal) return { kind: 'ratio', ratio: literal[1] !== undefined ? (literal[1] === 'true' ? 1 : 0) : clamp(Number(literal[2])) };
  const r = compile(expression);
  if (r.ok) return { kind: 'cel', program: r.program };
  // Not tracing is the safe side: a broken expression samples nothing.
  onError(`invalid sampling expression: ${r.error.message}`);
  return NEVER;
}

/** The per-request decision; `activation` is built only for a CEL expression. */
export function sampled(sampling: Sampling, activation: () => Activation, random: () => number = Math.random): boolean {
  if (sampling.kind === 'ratio') return sampling.ratio >= 1 || (sampling.ratio > 0 && random() < sampling.ratio);
  const result = sampling.program.evaluate(activation());
  if (!result.ok) return false;
  const value = result.value;
  if (typeof value === 'boolean') return value;
  const ratio = typeof value === 'number' ? value : typeof value === 'bigint' ? Number(value) : Number.NaN;
  return Number.isFinite(ratio) && (ratio >= 1 || (ratio > 0 && random() < ratio));
}

function clamp(ratio: number): number {
  return Math.min(1, Math.max(0, ratio));
}

export function emptyActivation(): Activation {
  return createActivation({});
}
