/**
 * `policies.ai` applied to the request body: prompt enrichment, defaults, overrides and CEL
 * transformations on the client's body; finalTransformations on the body sent upstream.
 * Expressions are compiled once per policy object (the IR is immutable and shared per config).
 */
import { compile, createActivation, evalValue, type CelInput, type Program } from '../../../cel/index.ts';
import type { AiPolicy, FieldExpression, PromptMessage, RouteType } from '../../../ir/ai.ts';

type Body = Record<string, unknown>;

export interface CompiledAiPolicy {
  readonly policy: AiPolicy;
  readonly transformations: readonly CompiledField[];
  readonly finalTransformations: readonly CompiledField[];
}

interface CompiledField { readonly field: string; readonly program: Program }

/** The AI policy cannot be applied: 500 for a broken policy (fail closed), 400 when the request makes an expression fail. */
export class AiPolicyError extends Error {
  readonly status: number;
  constructor(message: string, status: number) {
    super(message);
    this.status = status;
  }
}

const compiledPolicies = new WeakMap<AiPolicy, CompiledAiPolicy>();

/** Compiles (once) the policy's expressions; throws AiPolicyError for an expression the translator should have refused. */
export function compileAiPolicy(policy: AiPolicy): CompiledAiPolicy {
  let compiled = compiledPolicies.get(policy);
  if (!compiled) {
    compiled = { policy, transformations: programs(policy.transformations), finalTransformations: programs(policy.finalTransformations) };
    compiledPolicies.set(policy, compiled);
  }
  return compiled;
}

function programs(list: readonly FieldExpression[] | undefined): CompiledField[] {
  return (list ?? []).map((t) => {
    const r = compile(t.expression);
    if (!r.ok) throw new AiPolicyError(`invalid CEL in AI policy for field ${t.field}: ${r.error.message}`, 500);
    return { field: t.field, program: r.program };
  });
}

const CHAT_ROUTES: ReadonlySet<RouteType> = new Set(['Completions', 'Messages', 'Responses']);

/**
 * The client body after prompt, defaults, overrides and transformations (in that order, so a
 * transformation beats an override of the same field, as SPEC.md says). `cel` is the request's
 * CEL input; the body it sees is the body as it stands before transformations.
 */
export function applyRequestPolicy(body: Body, route: RouteType, p: CompiledAiPolicy, cel: CelInput): Body {
  const { policy } = p;
  let out: Body = { ...body };
  if (policy.prompt && CHAT_ROUTES.has(route)) out = withPrompt(out, route, policy.prompt);
  for (const d of policy.defaults ?? []) if (out[d.field] === undefined) out[d.field] = d.value;
  for (const o of policy.overrides ?? []) out[o.field] = o.value;
  return transform(out, p.transformations, cel);
}

/** finalTransformations on the upstream body (provider format). */
export function applyFinalTransformations(body: Body, p: CompiledAiPolicy, cel: CelInput): Body {
  return transform({ ...body }, p.finalTransformations, cel);
}

export function hasRequestPolicy(p: CompiledAiPolicy): boolean {
  const { policy } = p;
  return !!(policy.prompt || policy.defaults?.length || policy.overrides?.length || p.transformations.length > 0);
}

function transform(body: Body, fields: readonly CompiledField[], cel: CelInput): Body {
  if (fields.length === 0) return body;
  const activation = createActivation({ ...cel, request: { ...(cel.request ?? { method: 'POST', url: '/' }), body: Buffer.from(JSON.stringify(body)) } });
  for (const f of fields) {
    const r = evalValue(f.program, activation);
    if (!r.ok) throw new AiPolicyError(`AI transformation of ${f.field} failed: ${r.error.message}`, 400);
    body[f.field] = r.value;
  }
  return body;
}

type Prompt = NonNullable<AiPolicy['prompt']>;

/** Static messages around the conversation, in the shape of the client's format. */
function withPrompt(body: Body, route: RouteType, prompt: Prompt): Body {
  const prepend = prompt.prepend ?? [];
  const append = prompt.append ?? [];
  if (route === 'Responses') {
    const input = typeof body.input === 'string' ? [{ role: 'user', content: body.input }] : Array.isArray(body.input) ? body.input : [];
    return { ...body, input: [...prepend, ...input, ...append] };
  }
  const messages = Array.isArray(body.messages) ? body.messages : [];
  if (route === 'Messages') {
    // Anthropic has no system role in `messages`: system entries join the top-level system
    // prompt, prepended ones before the client's and appended ones after it.
    const systemOf = (list: readonly PromptMessage[]) => list.filter((m) => m.role === 'system').map((m) => m.content);
    const turns = (list: readonly PromptMessage[]) => list.filter((m) => m.role !== 'system');
    const [before, after] = [systemOf(prepend), systemOf(append)];
    const system = before.length + after.length === 0 ? body.system : mergeSystem(before, body.system, after);
    return { ...body, ...(system !== undefined ? { system } : {}), messages: [...turns(prepend), ...messages, ...turns(append)] };
  }
  return { ...body, messages: [...prepend, ...messages, ...append] };
}

/** A string system prompt stays a string; a list of blocks gets text blocks around the client's. */
function mergeSystem(before: readonly string[], existing: unknown, after: readonly string[]): unknown {
  if (Array.isArray(existing)) return [...before.map(textBlock), ...(existing as unknown[]), ...after.map(textBlock)];
  const client = typeof existing === 'string' && existing !== '' ? [existing] : [];
  return [...before, ...client, ...after].join('\n\n');
}

function textBlock(text: string): { type: 'text'; text: string } {
  return { type: 'text', text };
}
