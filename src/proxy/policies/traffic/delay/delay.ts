/**
 * traffic.delay (fault injection): waits before the request goes on. `duration` is CEL yielding
 * a duration string (`"2s"`), a CEL duration or a number of milliseconds; a plain Duration
 * string is accepted too. Non-positive or failing values inject nothing. The time spent is
 * recorded on the context so the Exchange charges it against the request timeout.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import type { Program } from '../../../../cel/index.ts';
import { activationOf, program } from '../../cel.ts';
import type { PolicyContext } from '../../context.ts';
import { CONTINUE, type PolicyResult } from '../../result.ts';
import type { StepCompiler } from '../../step.ts';
import { parseDurationMs } from '../../../ext/authz/cache.ts';

/** The value of a delay expression in milliseconds; undefined when it is none of the accepted kinds. */
export function delayMs(value: unknown): number | undefined {
  if (typeof value === 'bigint') return Number(value);
  if (typeof value === 'number') return Number.isFinite(value) ? value : undefined;
  if (typeof value === 'string') return parseDurationMs(value.trim());
  if (value !== null && typeof value === 'object' && 'seconds' in value && 'nanos' in value) {
    const d = value as { seconds: bigint | number; nanos: number };
    return Number(d.seconds) * 1000 + d.nanos / 1e6;
  }
  return undefined;
}

async function wait(ms: number, ctx: PolicyContext): Promise<PolicyResult> {
  await sleep(ms);
  ctx.upstream.delayedMs += ms;
  return CONTINUE;
}

export const compileDelay: StepCompiler<'delay'> = (member) => {
  const fixed = parseDurationMs(member.duration.trim());
  if (fixed !== undefined) return { member: 'delay', onRequest: (ctx) => (fixed > 0 ? wait(fixed, ctx) : CONTINUE) };
  const expression: Program = program(member.duration, 'delay.duration');
  return {
    member: 'delay',
    onRequest(ctx) {
      const result = expression.evaluate(activationOf(ctx));
      const ms = result.ok ? delayMs(result.value) : undefined;
      return ms !== undefined && ms > 0 ? wait(ms, ctx) : CONTINUE;
    },
  };
};
