/**
 * `ai.promptGuard` (SPEC.md AIPromptGuard) compiled into ordered CompiledGuard lists, once per
 * policy object (the IR is immutable and shared per config, as in body-policy.ts). Each entry is
 * one of a set of kinds; every kind registers a factory here (`registerGuardKind`), so the runner
 * never knows a kind's fields and a new kind is one module imported from guards/kinds.ts.
 */
import type { AiPolicy } from '../../../../ir/ai.ts';
import type { CompiledGuard, GuardPhase } from './types.ts';

/** What a factory gets besides its own block: where it sits and the answer a rejection gives. */
export interface GuardSpecContext {
  readonly phase: GuardPhase;
  /** `request[2].regex`, for error messages. */
  readonly path: string;
  readonly rejectStatus: number;
  readonly rejectMessage: string;
}

/** Builds one guard from its kind's block (`entry.regex`, `entry.webhook` …); throws GuardConfigError for a block it cannot use. */
export type GuardFactory = (spec: Readonly<Record<string, unknown>>, ctx: GuardSpecContext) => CompiledGuard;

/** A guard entry that cannot be compiled: the request fails closed (500), as any invalid AI policy. */
export class GuardConfigError extends Error {
  override name = 'GuardConfigError';
}

export interface CompiledPromptGuard {
  /** `streaming: Enabled`: response guards see streamed text, and Realtime messages are checked. */
  readonly streaming: boolean;
  readonly request: readonly CompiledGuard[];
  readonly response: readonly CompiledGuard[];
}

const DEFAULT_STATUS = 403;
const DEFAULT_MESSAGE: Record<GuardPhase, string> = {
  request: 'The request was rejected due to inappropriate content',
  response: 'The response was rejected due to inappropriate content',
};
/** SPEC.md: request entries take any of the five kinds, response entries all but providerAModeration. */
const KINDS: Record<GuardPhase, readonly string[]> = {
  request: ['regex', 'webhook', 'providerAModeration', 'cloudAGuardrails', 'cloudCShield'],
  response: ['regex', 'webhook', 'cloudAGuardrails', 'cloudCShield'],
};

const factories = new Map<string, GuardFactory>();

/** Called once per kind module at import time (guards/kinds.ts imports them all). */
export function registerGuardKind(kind: string, factory: GuardFactory): void {
  factories.set(kind, factory);
}

type Compiled = CompiledPromptGuard | GuardConfigError | undefined;
const compiled = new WeakMap<AiPolicy, Compiled>();

/**
 * The policy's guards, compiled on first use and kept with the policy object. Undefined when the
 * policy has none (the handler's fast path: one WeakMap lookup). Throws GuardConfigError for a
 * guard that cannot be compiled — every request under that policy then fails closed.
 */
export function promptGuardOf(policy: AiPolicy | undefined): CompiledPromptGuard | undefined {
  if (policy?.promptGuard === undefined) return undefined;
  let entry = compiled.get(policy);
  if (!compiled.has(policy)) {
    try {
      entry = compilePromptGuard(policy.promptGuard);
    } catch (err) {
      if (!(err instanceof GuardConfigError)) throw err;
      entry = err;
    }
    compiled.set(policy, entry);
  }
  if (entry instanceof GuardConfigError) throw entry;
  return entry;
}

/** Compiles an AIPromptGuard object; undefined when it has no guard at all. */
export function compilePromptGuard(raw: unknown): CompiledPromptGuard | undefined {
  if (!isDict(raw)) throw new GuardConfigError('promptGuard must be an object');
  const request = compileList(raw.request, 'request');
  const response = compileList(raw.response, 'response');
  if (request.length === 0 && response.length === 0) return undefined;
  return { streaming: raw.streaming === 'Enabled', request, response };
}

function compileList(raw: unknown, phase: GuardPhase): CompiledGuard[] {
  if (raw === undefined) return [];
  if (!Array.isArray(raw)) throw new GuardConfigError(`promptGuard.${phase} must be a list`);
  return raw.map((entry: unknown, i) => compileEntry(entry, phase, `${phase}[${i}]`));
}

function compileEntry(entry: unknown, phase: GuardPhase, path: string): CompiledGuard {
  if (!isDict(entry)) throw new GuardConfigError(`promptGuard.${path} must be an object`);
  const present = KINDS[phase].filter((k) => entry[k] !== undefined);
  if (present.length !== 1) throw new GuardConfigError(`promptGuard.${path}: exactly one of ${KINDS[phase].join(', ')} must be set`);
  const kind = present[0] as string;
  const spec = entry[kind];
  if (!isDict(spec)) throw new GuardConfigError(`promptGuard.${path}.${kind} must be an object`);
  const factory = factories.get(kind);
  // A kind this build does not know cannot be honoured: fail closed rather than let text through unchecked.
  if (!factory) throw new GuardConfigError(`promptGuard.${path}: the ${kind} guard is not available in this gateway`);
  const response = isDict(entry.response) ? entry.response : {};
  const status = typeof response.statusCode === 'number' && Number.isInteger(response.statusCode) && response.statusCode >= 200 && response.statusCode <= 599 ? response.statusCode : DEFAULT_STATUS;
  const message = typeof response.message === 'string' && response.message !== '' ? response.message : DEFAULT_MESSAGE[phase];
  return factory(spec, { phase, path: `${path}.${kind}`, rejectStatus: status, rejectMessage: message });
}

function isDict(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}
