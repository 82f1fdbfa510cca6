/**
 * The prompt-guard runner: guards in order, each seeing the text as the ones before it left it
 * (a Mask's output is the next guard's input), the first rejection wins, a guard that cannot
 * judge follows its failureMode (FailClosed: a rejection with its response). Synchronous while
 * every guard answers synchronously (regex), so a stream checked per chunk takes no promise hop.
 */
import type { RouteType } from '../../../../ir/ai.ts';
import type { CompiledGuard, GuardInput, GuardPhase, GuardSegment } from './types.ts';
import { requestSlots, responseSlots, type TextSlot } from './texts.ts';
import { endCall, startPolicyCall } from '../../../telemetry/tracing/request-trace.ts';
import { countPolicyOutcome } from '../../../telemetry/ai-metrics.ts';

/** The guard's answer for the whole list. `texts` is set when some guard masked (same length as the input). */
export type GuardOutcome =
  | { readonly kind: 'pass'; readonly texts?: readonly string[] }
  | { readonly kind: 'reject'; readonly status: number; readonly message: string; readonly guard: string; readonly failed: boolean };

export interface GuardRun {
  readonly phase: GuardPhase;
  readonly headers: GuardInput['headers'];
  readonly streaming: boolean;
  readonly signal: AbortSignal;
  /** A guard threw or its promise rejected (logged by the caller; the outcome says what followed). */
  readonly onFailure?: (guard: CompiledGuard, err: unknown) => void;
  /**
   * Several runs that make one verdict (a stream's batches, a Realtime session's messages): their
   * outcomes are counted once, by the tally, when it ends — not per run.
   */
  readonly tally?: GuardTally;
}

const PASS: GuardOutcome = { kind: 'pass' };

/**
 * One verdict (a request body, an answer, a whole streamed answer or Realtime session per phase)
 * counts once in switchboard_policy_outcomes_total{policy="promptGuard"}: `pass`, `mask`, `reject`,
 * or `error` when a guard could not judge and FailClosed made that the rejection (a FailOpen
 * failure counts `error` too, then the verdict's own outcome). A run without a tally is one verdict.
 */
export function runGuards(guards: readonly CompiledGuard[], segments: readonly GuardSegment[], run: GuardRun): GuardOutcome | Promise<GuardOutcome> {
  const outcome = step(guards, 0, segments, false, run);
  const tally = run.tally;
  if (tally) return outcome instanceof Promise ? outcome.then((o) => tally.record(o)) : tally.record(outcome);
  if (outcome instanceof Promise) return outcome.then(counted);
  return counted(outcome);
}

function counted(outcome: GuardOutcome): GuardOutcome {
  if (outcome.kind === 'pass') countPolicyOutcome('promptGuard', outcome.texts ? 'mask' : 'pass');
  else if (!outcome.failed) countPolicyOutcome('promptGuard', 'reject');
  return outcome;
}

/**
 * The outcome of many runs that make one verdict, counted once when `end` is called (the stream
 * or session ended, or was rejected): `error` if any guard failed, then `reject` if a guard
 * rejected, else `pass` (Mask is not applied to streamed text, so never `mask`). A tally no run
 * reached counts nothing, as a body without text counts nothing.
 */
export class GuardTally {
  #failed = false;
  #verdict: 'pass' | 'reject' | 'failed' | undefined;
  #ended = false;

  /** A run's outcome (runGuards calls it for runs with this tally); returned as it came. */
  record(outcome: GuardOutcome): GuardOutcome {
    if (outcome.kind === 'pass') this.#verdict ??= 'pass';
    else if (outcome.failed) {
      this.#failed = true;
      if (this.#verdict !== 'reject') this.#verdict = 'failed';
    } else this.#verdict = 'reject';
    return outcome;
  }

  /** A guard could not judge (counted `error` at the end, whatever followed). */
  failure(): void {
    this.#failed = true;
  }

  /** Counts the verdict, once. */
  end(): void {
    if (this.#ended || (this.#verdict === undefined && !this.#failed)) return;
    this.#ended = true;
    if (this.#failed) countPolicyOutcome('promptGuard', 'error');
    if (this.#verdict === 'reject' || this.#verdict === 'pass') countPolicyOutcome('promptGuard', this.#verdict);
  }
}

function step(guards: readonly CompiledGuard[], from: number, segments: readonly GuardSegment[], masked: boolean, run: GuardRun): GuardOutcome | Promise<GuardOutcome> {
  let current = segments;
  let changed = masked;
  for (let i = from; i < guards.length; i++) {
    const guard = guards[i] as CompiledGuard;
    let verdict;
    try {
      verdict = guard.check({ phase: run.phase, segments: current, headers: run.headers, streaming: run.streaming }, run.signal);
    } catch (err) {
      // A synchronous throw is handled like a rejected promise, without waiting a tick.
      const failed = failure(guard, err, run);
      if (failed) return failed;
      continue;
    }
    if (verdict instanceof Promise) {
      const at = current;
      const wasChanged = changed;
      // A guard that answers later calls a service: a CLIENT span on traced requests (telemetry/tracing).
      const span = startPolicyCall('prompt_guard', { 'switchboard.policy': 'promptGuard', 'switchboard.guard.kind': guard.kind, 'switchboard.guard.phase': run.phase });
      return verdict.then(
        (v) => {
          if (span) endCall(span, {});
          const next = apply(guard, v, at, run);
          if (next.kind === 'reject') return next;
          return step(guards, i + 1, next.segments, wasChanged || next.changed, run);
        },
        (err: unknown) => {
          if (span) endCall(span, { error: err });
          return failure(guard, err, run) ?? step(guards, i + 1, at, wasChanged, run);
        },
      );
    }
    const next = apply(guard, verdict, current, run);
    if (next.kind === 'reject') return next;
    current = next.segments;
    changed ||= next.changed;
  }
  return changed ? { kind: 'pass', texts: current.map((s) => s.text) } : PASS;
}

type Applied = { readonly kind: 'next'; readonly segments: readonly GuardSegment[]; readonly changed: boolean } | Extract<GuardOutcome, { kind: 'reject' }>;

function apply(guard: CompiledGuard, verdict: Awaited<ReturnType<CompiledGuard['check']>>, segments: readonly GuardSegment[], run: GuardRun): Applied {
  if (verdict.action === 'reject') return { kind: 'reject', status: guard.rejectStatus, message: guard.rejectMessage, guard: guard.kind, failed: false };
  // Mask is not applied to streamed text (SPEC.md): the text passes as it is.
  if (verdict.action === 'pass' || run.streaming) return { kind: 'next', segments, changed: false };
  if (verdict.segments.length !== segments.length) {
    // A guard answering for other text than it was given cannot be trusted with this text.
    return failure(guard, new Error(`${guard.kind} guard masked ${verdict.segments.length} segments of ${segments.length}`), run) ?? { kind: 'next', segments, changed: false };
  }
  let changed = false;
  const next = segments.map((s, i) => {
    const text = verdict.segments[i] as string;
    if (text === s.text) return s;
    changed = true;
    return { role: s.role, text };
  });
  return { kind: 'next', segments: next, changed };
}

/** FailClosed: the guard's rejection; FailOpen: undefined (the text goes on to the next guard). */
function failure(guard: CompiledGuard, err: unknown, run: GuardRun): Extract<GuardOutcome, { kind: 'reject' }> | undefined {
  run.onFailure?.(guard, err);
  if (run.tally) run.tally.failure();
  else countPolicyOutcome('promptGuard', 'error');
  if (guard.failOpen) return undefined;
  return { kind: 'reject', status: guard.rejectStatus, message: guard.rejectMessage, guard: guard.kind, failed: true };
}

/** Guards over a parsed body's slots; a mask is written into the body (the caller serialises it again). */
export function guardSlots(guards: readonly CompiledGuard[], slots: readonly TextSlot[], run: GuardRun): GuardOutcome | Promise<GuardOutcome> {
  if (slots.length === 0) return PASS;
  const outcome = runGuards(guards, slots.map((s) => ({ role: s.role, text: s.text })), run);
  const write = (o: GuardOutcome): GuardOutcome => {
    if (o.kind === 'pass' && o.texts) o.texts.forEach((t, i) => { if (t !== slots[i]?.text) slots[i]?.write(t); });
    return o;
  };
  return outcome instanceof Promise ? outcome.then(write) : write(outcome);
}

export type BodyGuardOutcome =
  | { readonly kind: 'pass'; readonly body: Uint8Array }
  | Extract<GuardOutcome, { kind: 'reject' }>;

/**
 * Guards over a JSON body (a client's request or the answer in the client's format). A body that
 * is not a JSON object has no text a guard can find: it passes (the planner refuses a malformed
 * request; an answer that is not JSON is not chat text). The body is re-serialised only when masked.
 */
export function guardJsonBody(guards: readonly CompiledGuard[], route: RouteType, body: Uint8Array, run: GuardRun): BodyGuardOutcome | Promise<BodyGuardOutcome> {
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(body.buffer, body.byteOffset, body.byteLength).toString('utf8'));
  } catch {
    return { kind: 'pass', body };
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) return { kind: 'pass', body };
  const dict = parsed as Record<string, unknown>;
  const slots = run.phase === 'request' ? requestSlots(route, dict) : responseSlots(route, dict);
  const outcome = guardSlots(guards, slots, run);
  const finish = (o: GuardOutcome): BodyGuardOutcome => {
    if (o.kind === 'reject') return o;
    return { kind: 'pass', body: o.texts ? Buffer.from(JSON.stringify(dict)) : body };
  };
  return outcome instanceof Promise ? outcome.then(finish) : finish(outcome);
}
