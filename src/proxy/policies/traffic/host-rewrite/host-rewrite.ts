/**
 * traffic.hostRewrite: `Auto` sends the destination's host as Host, `None` the client's. The
 * Exchange applies it because only it knows the chosen endpoint, and skips it when an HTTPRoute
 * URLRewrite already set the hostname.
 */
import { CONTINUE } from '../../result.ts';
import type { StepCompiler } from '../../step.ts';

export const compileHostRewrite: StepCompiler<'hostRewrite'> = (member) => {
  if (member.mode !== 'Auto' && member.mode !== 'None') throw new Error(`hostRewrite.mode must be Auto or None, not ${String(member.mode)}`);
  const mode = member.mode;
  return {
    member: 'hostRewrite',
    onRequest(ctx) {
      ctx.upstream.hostRewrite = mode;
      return CONTINUE;
    },
  };
};
