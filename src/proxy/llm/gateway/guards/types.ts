/**
 * The contract between the prompt-guard runner (which finds the text in a request, an answer, a
 * stream or a Realtime message, and applies the verdict in the client's format) and each guard
 * kind (regex, webhook, providerAModeration, cloudAGuardrails, cloudCShield). A guard sees plain
 * text segments and never a wire format, so one guard serves every route type and provider.
 */

/** Which side of the exchange a guard is looking at. */
export type GuardPhase = 'request' | 'response';

/** One piece of text the guard judges: a message's content, an answer's text, a streamed delta. */
export interface GuardSegment {
  /** `system`, `user`, `assistant`, `tool` … as the canonical request names it. */
  readonly role: string;
  readonly text: string;
}

export interface GuardInput {
  readonly phase: GuardPhase;
  readonly segments: readonly GuardSegment[];
  /**
   * The client's request headers on the request phase, the provider's answer headers on the
   * response phase (what a webhook's `forwardHeaderMatches` selects from), lower-case names.
   */
  readonly headers: Readonly<Record<string, string | readonly string[] | undefined>>;
  /** True when the text is a part of a streamed answer (Mask is not applied to streams, SPEC.md). */
  readonly streaming: boolean;
}

export type GuardVerdict =
  | { readonly action: 'pass' }
  /** Same length as the input's segments: the text to send instead of each one. */
  | { readonly action: 'mask'; readonly segments: readonly string[] }
  /** The guard's configured `response` (status, message) is answered in the client's format. */
  | { readonly action: 'reject'; readonly reason?: string };

/** A guard compiled from one PromptguardRequest / PromptguardResponse entry of the IR. */
export interface CompiledGuard {
  /** `regex`, `webhook`, `providerAModeration`, `cloudAGuardrails`, `cloudCShield`. */
  readonly kind: string;
  /** From the entry's `response` (CustomResponse), defaults applied (403, SPEC.md's message). */
  readonly rejectStatus: number;
  readonly rejectMessage: string;
  /**
   * Judges the input. A guard that calls a service and cannot get an answer throws (or rejects);
   * the runner then applies the guard's `failureMode` (FailClosed by default: reject). `signal`
   * aborts when the client leaves or the route's timeout fires.
   */
  check(input: GuardInput, signal: AbortSignal): GuardVerdict | Promise<GuardVerdict>;
  /** FailOpen lets the text pass when `check` fails; kinds without `failureMode` are FailClosed. */
  readonly failOpen: boolean;
}
