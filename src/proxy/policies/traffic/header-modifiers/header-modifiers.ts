import type { HeaderFilterPolicy } from '../../../../ir/policy.ts';
import type { HeaderModifier } from '../../../../ir/types.ts';
import { applyHeaderModifier, compileHeaderModifier } from '../../../http/header-modifier.ts';
import { CONTINUE } from '../../result.ts';
import type { StepCompiler } from '../../step.ts';

function modifier(spec: HeaderFilterPolicy | undefined) {
  if (!spec) return undefined;
  const m: HeaderModifier = { set: spec.set ?? [], add: spec.add ?? [], remove: spec.remove ?? [] };
  return compileHeaderModifier(m);
}

/** traffic.headerModifiers: the Gateway API header filters, as a policy (static values). */
export const compileHeaderModifiers: StepCompiler<'headerModifiers'> = (member) => {
  const request = modifier(member.request);
  const response = modifier(member.response);
  return {
    member: 'headerModifiers',
    onRequest(ctx) {
      if (request) applyHeaderModifier(ctx.upstreamHeaders, request, 'request');
      if (response) ctx.responseMutations.push((headers) => applyHeaderModifier(headers, response, 'response'));
      return CONTINUE;
    },
  };
};
