import { evalBody, evalString, type Program } from '../../../../cel/index.ts';
import type { DirectResponsePolicy } from '../../../../ir/policy.ts';
import { activationOf, program } from '../../cel.ts';
import type { PolicyContext } from '../../context.ts';
import { conditionalStep } from '../../conditional/conditional.ts';
import { respond, respondError, type PolicyResult } from '../../result.ts';
import type { StepCompiler } from '../../step.ts';

interface CompiledDirectResponse {
  readonly status: number;
  readonly body: string | undefined;
  readonly bodyExpression: Program | undefined;
  readonly headers: readonly { readonly name: string; readonly value: Program }[];
}

function compileOne(p: DirectResponsePolicy, where: string): CompiledDirectResponse {
  return {
    status: p.status ?? 200,
    body: p.body,
    bodyExpression: p.bodyExpression !== undefined ? program(p.bodyExpression, `${where}.bodyExpression`) : undefined,
    headers: (p.headers ?? []).map((h, i) => ({ name: h.name.toLowerCase(), value: program(h.value, `${where}.headers[${i}].value`) })),
  };
}

function answer(r: CompiledDirectResponse, ctx: PolicyContext): PolicyResult {
  const needsCel = r.bodyExpression !== undefined || r.headers.length > 0;
  const activation = needsCel ? activationOf(ctx) : undefined;
  const headers: Record<string, string> = {};
  for (const h of r.headers) {
    const value = evalString(h.value, activation!);
    // A header whose expression fails is left out, like a failing log attribute.
    if (value.ok) headers[h.name] = value.value;
  }
  let body: string | Buffer | undefined = r.body;
  if (r.bodyExpression) {
    const value = evalBody(r.bodyExpression, activation!);
    if (!value.ok) return respondError(500, 'direct_response_failed', 'the direct response body expression failed');
    body = typeof value.value === 'string' ? value.value : Buffer.from(value.value);
  }
  return respond(r.status, body, headers);
}

/** traffic.directResponse: answer from the gateway; the conditional form picks the first branch whose condition holds. */
export const compileDirectResponse: StepCompiler<'directResponse'> = (member) =>
  conditionalStep<DirectResponsePolicy>('directResponse', member, (p, where) => {
    const response = compileOne(p, where);
    return (ctx) => answer(response, ctx);
  });
