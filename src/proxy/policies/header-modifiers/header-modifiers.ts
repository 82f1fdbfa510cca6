import type { HeaderModifier } from '../../../ir/types.ts';
import { applyHeaderModifier, compileHeaderModifier } from '../../filters/header-modifier.ts';
import { CONTINUE } from '../result.ts';
import type { StepCompiler } from '../step.ts';

interface HeaderFilterSpec {
  readonly set?: readonly { readonly name: string; readonly value: string }[];
  readonly add?: readonly { readonly name: string; readonly value: string }[];
  readonly remove?: readonly string[];
}

function modifier(spec: HeaderFilterSpec | undefined) {
  if (!spec) return undefined;
  const m: HeaderModifier = { set: spec.set ?? [], add: spec.add ?? [], remove: spec.remove ?? [] };
  return compileHeaderModifier(m);
}

/** traffic.headerModifiers: the Gateway API header filters, as a policy (static values). */
export const compileHeaderModifiers: StepCompiler<'headerModifiers'> = (member) => {
  const spec = member as { request?: HeaderFilterSpec; response?: HeaderFilterSpec };
  const request = modifier(spec.request);
  const response = modifier(spec.response);
  return {
    member: 'headerModifiers',
    onRequest(ctx) {
      if (request) applyHeaderModifier(ctx.upstreamHeaders, request, 'request');
      if (response) ctx.responseMutations.push((headers) => applyHeaderModifier(headers, response, 'response'));
      return CONTINUE;
    },
  };
};
