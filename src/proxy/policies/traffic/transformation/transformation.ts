/**
 * traffic.transformation (and backend transformation, same shape): header set/add/remove with
 * CEL values and `body` via CEL, for the request and the response. A request body expression
 * buffers the body first when it reads `request.body` (413 past the buffer limit). A response
 * body expression buffers the upstream response (502 past the limit) through a ResponseFilter;
 * without one the response streams untouched. Response header values see `response.code` and
 * `response.headers`; only the body expression sees `response.body`.
 */
import { BodyTooLargeError, readBodyBounded } from '../../../http/body.ts';
import { createActivation, evalBody, referencesBody, type Program } from '../../../../cel/index.ts';
import type { HeaderTransform, TransformationPolicy } from '../../../../ir/policy.ts';
import { activationOf, program } from '../../cel.ts';
import { conditionalStep, type RunPolicy } from '../../conditional/conditional.ts';
import type { FilteredResponse, PolicyContext } from '../../context.ts';
import { DEFAULT_MAX_BUFFER_BYTES } from '../../request-context.ts';
import { CONTINUE, respondError, type PolicyResult } from '../../result.ts';
import type { StepCompiler } from '../../step.ts';
import { applyHeaderTransform, compileHeaderTransform, isEmptyHeaderTransform, type CompiledHeaderTransform } from './headers.ts';

interface CompiledSide {
  readonly headers: CompiledHeaderTransform;
  readonly body: Program | undefined;
}

export class ResponseBodyTooLargeError extends Error {
  /** SPEC.md Errors: a response body over the buffer limit is a 502. */
  readonly status = 502;
  constructor(limit: number) {
    super(`response body exceeds the buffer limit of ${limit} bytes`);
  }
}

function compileSide(t: HeaderTransform | undefined, where: string): CompiledSide | undefined {
  if (!t) return undefined;
  const side = { headers: compileHeaderTransform(t, where), body: t.body !== undefined ? program(t.body, `${where}.body`) : undefined };
  return isEmptyHeaderTransform(side.headers) && side.body === undefined ? undefined : side;
}

const BODY_FAILED = respondError(500, 'transformation_failed', 'the request body transformation failed');

async function transformRequestBody(body: Program, ctx: PolicyContext): Promise<PolicyResult> {
  if (referencesBody(body)) await ctx.readBody();
  const value = evalBody(body, activationOf(ctx));
  if (!value.ok) return BODY_FAILED;
  ctx.replaceBody(Buffer.from(value.value));
  return CONTINUE;
}

/** Collects a response body up to `limit` bytes (SPEC.md `http.maxBufferSize`); more is a 502. */
export async function collect(body: AsyncIterable<Uint8Array>, limit: number): Promise<Buffer> {
  try {
    return await readBodyBounded(body, limit, { what: 'response body' });
  } catch (error) {
    if (error instanceof BodyTooLargeError) throw new ResponseBodyTooLargeError(limit);
    throw error;
  }
}

function responseActivation(ctx: PolicyContext, status: number, headers: FilteredResponse['headers'], body?: Uint8Array) {
  return createActivation({ ...ctx.cel(), response: { code: status, headers, ...(body ? { body } : {}) } });
}

function registerResponse(side: CompiledSide, ctx: PolicyContext): void {
  if (!isEmptyHeaderTransform(side.headers)) {
    ctx.responseMutations.push((headers, status) => applyHeaderTransform(side.headers, headers, responseActivation(ctx, status, headers)));
  }
  const bodyProgram = side.body;
  if (!bodyProgram) return;
  const transform = (original: Uint8Array, response: FilteredResponse): Uint8Array => {
    const value = evalBody(bodyProgram, responseActivation(ctx, response.status, response.headers, original));
    if (!value.ok) throw new Error(`response body transformation failed: ${value.error.message}`);
    return typeof value.value === 'string' ? Buffer.from(value.value) : value.value;
  };
  ctx.responseFilters.push({
    async *body(body, response) {
      yield transform(await collect(body, DEFAULT_MAX_BUFFER_BYTES), response);
    },
    // One MCP message of a streamed answer: `response.body` is that message (docs/mcp.md).
    message: transform,
  });
}

export function compileTransformationPolicy(p: TransformationPolicy, where: string): RunPolicy {
  const request = compileSide(p.request, `${where}.request`);
  const response = compileSide(p.response, `${where}.response`);
  return (ctx) => {
    if (response) registerResponse(response, ctx);
    if (!request) return CONTINUE;
    if (!isEmptyHeaderTransform(request.headers)) applyHeaderTransform(request.headers, ctx.upstreamHeaders, activationOf(ctx));
    return request.body ? transformRequestBody(request.body, ctx) : CONTINUE;
  };
}

export const compileTransformation: StepCompiler<'transformation'> = (member) =>
  conditionalStep<TransformationPolicy>('transformation', member, compileTransformationPolicy);
