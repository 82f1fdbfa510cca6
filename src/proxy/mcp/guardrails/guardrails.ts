/**
 * MCP guardrails (`policies.mcp.guardrails`): remote processors called in order for the methods
 * their `methods` map selects, before the message reaches a target (Request) and/or before the
 * client sees the result (Response). A processor passes, replaces the params/result, or rejects
 * with a JSON-RPC error; the first rejection short-circuits. Wire protocol: proto/mcp/guardrail.proto.
 */
import type { IncomingHttpHeaders } from 'node:http';
import { createClient, type Client } from '@connectrpc/connect';
import { createGrpcTransport, Http2SessionManager } from '@connectrpc/connect-node';
import type { Logger } from '../../../common/logger.ts';
import { compile, createActivation, evalValue, type CelInput, type Program } from '../../../cel/index.ts';
import type { McpGuardrailIR, McpGuardrailPhase } from '../../../ir/mcp.ts';
import { ErrorCode, type JsonRpcRequest, type JsonRpcResponse, type Params } from '../jsonrpc.ts';
import { mostSpecificPattern } from '../methods.ts';
import { McpGuardrail, Phase, type CheckResponse } from './gen/guardrail_pb.js';
import { traceCall } from '../../telemetry/tracing/request-trace.ts';
import { grpcChannel, type ServiceTargets } from '../../ext/endpoint.ts';
import { isPublished, liveTargets } from '../../policies/backend/service-targets.ts';

/** The span of a guardrail service call. */
const GUARDRAIL_SPAN = { 'switchboard.policy': 'mcpGuardrail' } as const;

/** A processor that does not answer within this fails (then FailClosed rejects, FailOpen passes). */
const CHECK_TIMEOUT_MS = 5_000;
/**
 * Largest answer accepted from a processor (a replaced params/result object). Larger fails the
 * check (RESOURCE_EXHAUSTED): FailClosed rejects the message, FailOpen passes it unchanged.
 */
const MAX_GUARDRAIL_ANSWER_BYTES = 16 * 1024 * 1024;

export interface GuardedMessage {
  readonly request: JsonRpcRequest;
  /** The target serving the item, '' for fan-out methods. */
  readonly target: string;
  readonly headers: IncomingHttpHeaders;
  readonly context: CelInput | undefined;
}

type Verdict = { readonly kind: 'pass' } | { readonly kind: 'mutate'; readonly value: Params } | { readonly kind: 'reject'; readonly error: JsonRpcResponse['error'] & object };

class Processor {
  readonly #ir: McpGuardrailIR;
  readonly #patterns: readonly string[];
  readonly #metadata: readonly (readonly [string, Program | undefined])[];
  readonly #allowed: ReadonlySet<string> | undefined;
  readonly #disallowed: ReadonlySet<string>;
  readonly #client: Client<typeof McpGuardrail>;
  readonly #close: () => void;
  readonly #logger: Logger;

  constructor(ir: McpGuardrailIR, logger: Logger) {
    this.#ir = ir;
    this.#logger = logger;
    this.#patterns = Object.keys(ir.methods);
    this.#metadata = Object.entries(ir.metadata ?? {}).map(([name, expression]) => {
      const compiled = compile(expression);
      if (!compiled.ok) logger.error({ name, expression, error: compiled.error.message }, 'MCP guardrail metadata expression does not compile; the processor fails every message');
      return [name, compiled.ok ? compiled.program : undefined] as const;
    });
    this.#allowed = ir.allowedRequestHeaders && ir.allowedRequestHeaders.length > 0 ? new Set(ir.allowedRequestHeaders.map((h) => h.toLowerCase())) : undefined;
    this.#disallowed = new Set((ir.disallowedRequestHeaders ?? []).map((h) => h.toLowerCase()));
    // A backend with ready endpoints: each call to the next of them, with the TLS of the Service's
    // own backend policies, as the newest config says (this processor is kept across versions).
    const targets = ir.backendKey !== undefined && isPublished(ir.backendKey) ? backendTargetsOrUndefined(ir.backendKey) : undefined;
    if (targets) {
      const channel = grpcChannel(targets);
      this.#client = createClient(McpGuardrail, channel.transport);
      this.#close = channel.close;
      return;
    }
    // An endpoint the translator could not resolve (url '') gets a transport that never connects.
    const url = ir.url === '' ? 'http://invalid.' : ir.url;
    const sessions = new Http2SessionManager(url, { idleConnectionTimeoutMs: 30_000 });
    this.#client = createClient(McpGuardrail, createGrpcTransport({ baseUrl: url, sessionManager: sessions, readMaxBytes: MAX_GUARDRAIL_ANSWER_BYTES }));
    this.#close = () => sessions.abort();
  }

  phaseOf(method: string): McpGuardrailPhase {
    const pattern = mostSpecificPattern(this.#patterns, method);
    return pattern === undefined ? 'Off' : (this.#ir.methods[pattern] ?? 'Off');
  }

  async check(phase: 'request' | 'response', message: GuardedMessage, result?: Params): Promise<Verdict> {
    try {
      if (this.#ir.url === '') throw new Error('the processor endpoint did not resolve');
      // A CLIENT span on traced requests (telemetry/tracing).
      const answer = await traceCall('mcp_guardrail', GUARDRAIL_SPAN, () => this.#client.check({
        phase: phase === 'request' ? Phase.REQUEST : Phase.RESPONSE,
        method: message.request.method,
        target: message.target,
        paramsJson: JSON.stringify(message.request.params ?? {}),
        resultJson: result === undefined ? '' : JSON.stringify(result),
        headers: this.#headers(message.headers),
        metadata: this.#evaluate(message),
      }, { timeoutMs: CHECK_TIMEOUT_MS }));
      return verdictOf(answer, phase);
    } catch (error) {
      const reason = error instanceof Error ? error.message : String(error);
      if (this.#ir.failureMode === 'FailOpen') {
        this.#logger.warn({ guardrail: this.#ir.url, method: message.request.method, error: reason }, 'MCP guardrail failed; FailOpen lets the message through');
        return { kind: 'pass' };
      }
      this.#logger.warn({ guardrail: this.#ir.url, method: message.request.method, error: reason }, 'MCP guardrail failed; FailClosed rejects the message');
      return { kind: 'reject', error: { code: ErrorCode.UpstreamFailed, message: 'MCP guardrail unavailable' } };
    }
  }

  close(): void {
    this.#close();
  }

  #headers(headers: IncomingHttpHeaders): Record<string, string> {
    const out: Record<string, string> = {};
    for (const [name, value] of Object.entries(headers)) {
      if (value === undefined || this.#disallowed.has(name) || (this.#allowed && !this.#allowed.has(name))) continue;
      out[name] = Array.isArray(value) ? value.join(', ') : value;
    }
    return out;
  }

  #evaluate(message: GuardedMessage): Record<string, string> {
    const out: Record<string, string> = {};
    if (this.#metadata.length === 0) return out;
    const activation = createActivation({ ...message.context, mcp: { method: message.request.method, target: message.target } });
    for (const [name, program] of this.#metadata) {
      if (!program) throw new Error(`metadata ${name} does not compile`);
      const value = evalValue(program, activation);
      // A failing expression leaves its key out rather than failing the message.
      if (value.ok) out[name] = typeof value.value === 'string' ? value.value : JSON.stringify(value.value);
    }
    return out;
  }
}

function parseObject(json: string, what: string): Params {
  const value: unknown = JSON.parse(json);
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new Error(`guardrail ${what} is not a JSON object`);
  return value as Params;
}

function verdictOf(answer: CheckResponse, phase: 'request' | 'response'): Verdict {
  const decision = answer.decision;
  switch (decision.case) {
    case 'reject': {
      const { code, message, dataJson } = decision.value;
      const error = { code: code === 0 ? ErrorCode.InvalidRequest : code, message: message || 'Rejected by an MCP guardrail' };
      return { kind: 'reject', error: dataJson ? { ...error, data: JSON.parse(dataJson) as unknown } : error };
    }
    case 'mutate': {
      const json = phase === 'request' ? decision.value.paramsJson : decision.value.resultJson;
      return json === '' ? { kind: 'pass' } : { kind: 'mutate', value: parseObject(json, phase === 'request' ? 'params' : 'result') };
    }
    default:
      return { kind: 'pass' };
  }
}

/** The processors of one MCP backend, in order. */
export class Guardrails {
  readonly #processors: readonly Processor[];

  constructor(processors: readonly McpGuardrailIR[] | undefined, logger: Logger) {
    this.#processors = (processors ?? []).map((p) => new Processor(p, logger));
  }

  get enabled(): boolean {
    return this.#processors.length > 0;
  }

  /** The request to serve (params maybe replaced), or the error response a processor rejected it with. */
  async onRequest(message: GuardedMessage): Promise<{ readonly request: JsonRpcRequest } | { readonly response: JsonRpcResponse }> {
    let request = message.request;
    for (const processor of this.#processors) {
      const phase = processor.phaseOf(request.method);
      if (phase !== 'Request' && phase !== 'Full') continue;
      const verdict = await processor.check('request', { ...message, request });
      if (verdict.kind === 'reject') return { response: { jsonrpc: '2.0', id: request.id, error: verdict.error } };
      if (verdict.kind === 'mutate') request = { ...request, params: verdict.value };
    }
    return { request };
  }

  /** The response the client gets: a successful result may be replaced or turned into an error. */
  async onResponse(message: GuardedMessage, response: JsonRpcResponse): Promise<JsonRpcResponse> {
    let result = response.result;
    if (result === undefined) return response;
    for (const processor of this.#processors) {
      const phase = processor.phaseOf(message.request.method);
      if (phase !== 'Response' && phase !== 'Full') continue;
      const verdict = await processor.check('response', message, result);
      if (verdict.kind === 'reject') return { jsonrpc: '2.0', id: response.id, error: verdict.error };
      if (verdict.kind === 'mutate') result = verdict.value;
    }
    return result === response.result ? response : { ...response, result };
  }

  close(): void {
    for (const p of this.#processors) p.close();
  }
}

/** The backend's live targets, or undefined when it has no usable endpoint now (then the URL fallback). */
function backendTargetsOrUndefined(key: string): ServiceTargets | undefined {
  try {
    return liveTargets(key);
  } catch {
    return undefined;
  }
}
