/**
 * A target's own backend request steps (extAuth, transformation's request side) on each call the
 * gateway makes to that target, never on calls to other targets (docs/mcp.md "Target backend
 * policies"). The route's steps ran once for the client request before the multiplexer (they see
 * the client's HTTP request); a target's run per message POSTed to it, on a view of the client
 * request whose body is that message: header changes reach that target's request only, a body
 * transformation rewrites the message sent, its `response.body` the target's answer to it, a
 * refusal fails that leg (UpstreamError `refused`).
 */
import type { CelInput } from '../../../cel/index.ts';
import type { CompiledBackendPolicy } from '../../policies/backend/compile.ts';
import { gateUpstreamCall, type PolicyGate } from '../../policies/backend/gate.ts';
import { NO_HEADER_CHANGES, type HeaderChanges } from '../../policies/backend/policy-headers.ts';
import { hasRequestSteps } from '../../policies/backend/request-steps.ts';
import type { CelCache, PolicyContext, RequestIdentity, ResponseFilter, TokenUsage } from '../../policies/context.ts';
import type { ResponseMutation } from '../../http/downstream.ts';
import type { HeaderMap } from '../../http/headers.ts';
import type { DirectResponse } from '../../policies/result.ts';
import type { JsonRpcMessage, JsonRpcResponse } from '../jsonrpc.ts';
import { UpstreamError } from './client.ts';

/** What a passed leg changes on its upstream request: headers (after the request's own changes) and, when transformed, the body. */
export interface LegChanges {
  readonly headers: HeaderChanges;
  /** The message as the transformation rewrote it; undefined: send the message as it was. */
  readonly body: string | undefined;
  /** The target's answer to this message through its transformation's `response.body` (per message, as for SSE answers); absent: none. */
  readonly answer?: (response: JsonRpcResponse) => JsonRpcResponse;
  /**
   * The response header changes the target's steps registered (`transformation.response`
   * set/add/remove, extAuth response headers), for a client answer that is this target's alone
   * (AnswerHeaders); absent: none.
   */
  readonly answerHeaders?: readonly ResponseMutation[];
}

/**
 * Where a client answer that carries one target's response alone takes that target's response
 * header changes: called once the leg passed, before the message is sent (so before anything of
 * the target's answer, an SSE head included, goes to the client).
 */
export type AnswerHeaders = (changes: readonly ResponseMutation[]) => void;

/** Runs a target's steps on one message (undefined for a GET stream: headers only). Throws UpstreamError `refused`. */
export type LegGate = (target: string, body: string | undefined) => Promise<LegChanges>;

/** Per compiled route policy: whether a target has steps of its own (a backend handler serves one set of target names). */
const NEEDED = new WeakMap<CompiledBackendPolicy, boolean>();

const UNCHANGED: LegChanges = Object.freeze({ headers: NO_HEADER_CHANGES, body: undefined });

/** Never taken from a leg's header changes: the gateway derives them for each upstream request. */
const GATEWAY_OWNED = new Set(['host', 'content-length', 'transfer-encoding', 'connection']);

/**
 * The legs of one client request: `for(target)` is the gate of calls to that target, undefined
 * when the target has no request steps of its own (the common case: no per-message work).
 */
export class TargetGates {
  readonly #route: CompiledBackendPolicy;
  readonly #policy: PolicyContext | undefined;

  constructor(route: CompiledBackendPolicy, policy: PolicyContext | undefined) {
    this.#route = route;
    this.#policy = policy;
  }

  /**
   * Whether any target of `names` has steps of its own under `route` (compile.ts keeps a
   * target's compiled steps only for members the target's policy sets differently from the route).
   */
  static needed(route: CompiledBackendPolicy | undefined, names: readonly string[]): route is CompiledBackendPolicy {
    if (route === undefined) return false;
    // Compiled policies live for a config: decided once each, a flag check per request after that.
    let needed = NEEDED.get(route);
    if (needed === undefined) NEEDED.set(route, (needed = names.some((name) => ownSteps(route, name) !== undefined)));
    return needed;
  }

  for(target: string): LegGate | undefined {
    const own = ownSteps(this.#route, target);
    if (own === undefined) return undefined;
    return (name, body) => runLeg(own, this.#policy, name, body);
  }
}

function ownSteps(route: CompiledBackendPolicy, target: string): CompiledBackendPolicy | undefined {
  const own = route.subBackend(target);
  // An invalid target policy already fails that target's calls (policy.ts: compileTargetAccess).
  return own !== route && (hasRequestSteps(own) || own.invalid.length > 0) ? own : undefined;
}

async function runLeg(own: CompiledBackendPolicy, parent: PolicyContext | undefined, target: string, body: string | undefined): Promise<LegChanges> {
  // Without the request's context nothing can be checked: gateUpstreamCall refuses (fails closed).
  const leg = parent === undefined ? undefined : new TargetLegContext(parent, body);
  const gate: PolicyGate = await gateUpstreamCall(own, undefined, leg, new Map());
  if (gate.kind === 'refused') throw refusedError(target, gate.response);
  if (leg === undefined) return UNCHANGED;
  let headers = gate.headers;
  if ([...headers.keys()].some((name) => GATEWAY_OWNED.has(name))) headers = new Map([...headers].filter(([name]) => !GATEWAY_OWNED.has(name)));
  const rewritten = leg.rewrittenBody();
  const answer = answerFilter(target, leg.responseFilters);
  const answerHeaders = leg.responseMutations.length > 0 ? leg.responseMutations : undefined;
  if (answer === undefined && answerHeaders === undefined) return headers.size === 0 && rewritten === undefined ? UNCHANGED : { headers, body: rewritten };
  return { headers, body: rewritten, ...(answer !== undefined ? { answer } : {}), ...(answerHeaders !== undefined ? { answerHeaders } : {}) };
}

/**
 * The message-wise response filters the target's steps registered (`transformation.response.body`),
 * applied to its answer to this message alone; a failure answers that request with a JSON-RPC
 * error 500 `transformation_failed`, as a failing expression on a streamed answer does.
 */
function answerFilter(target: string, filters: readonly ResponseFilter[]): LegChanges['answer'] {
  const each = filters.flatMap((f) => (f.message ? [f.message.bind(f)] : []));
  if (each.length === 0) return undefined;
  return (response) => {
    let bytes: Uint8Array = Buffer.from(JSON.stringify(response));
    try {
      for (const message of each) bytes = message(bytes, { status: 200, headers: {} });
      const parsed = JSON.parse(Buffer.from(bytes).toString('utf8')) as JsonRpcResponse;
      return { ...parsed, id: response.id };
    } catch (error) {
      throw new UpstreamError(target, 'refused', `the response transformation of MCP target "${target}" failed: ${(error as Error).message}`, { status: 500, code: 'transformation_failed' });
    }
  };
}

/** Runs the target's gate (if any) for `message`; undefined when the target has no steps of its own. */
export function legFor(gate: LegGate | undefined, target: string, message: JsonRpcMessage): Promise<LegChanges> | undefined {
  return gate === undefined ? undefined : gate(target, JSON.stringify(message));
}

/** Hands the leg's response header changes to `sink` (the transport, when the client's answer is this target's alone). */
export function reportAnswerHeaders(leg: LegChanges | undefined, sink: AnswerHeaders | undefined): void {
  if (leg?.answerHeaders !== undefined && sink !== undefined) sink(leg.answerHeaders);
}

/** The answer as the leg's response side leaves it. */
export function answered(leg: LegChanges | undefined, response: JsonRpcResponse): JsonRpcResponse {
  return leg?.answer === undefined ? response : leg.answer(response);
}

/** The refusal as an UpstreamError: its status and docs/errors.md code become the JSON-RPC error's `data`. */
function refusedError(target: string, response: DirectResponse): UpstreamError {
  const code = response.error?.code ?? (response.status === 401 ? 'unauthorized' : 'forbidden');
  const message = response.error?.message ?? `the backend policy of MCP target "${target}" refused the call`;
  return new UpstreamError(target, 'refused', message, { status: response.status, code });
}

/**
 * The client request as a target's steps see it: method, path, client headers, identity and CEL
 * input of the client request, but its own copy of the upstream headers and identity (an
 * `extauthz` result of one target is not another's), the message sent to the target as the
 * body, and response effects kept to itself: message-wise body filters apply to the target's
 * answer to this message; header mutations go to the client's answer only when it is this
 * target's alone (a call routed to it, AnswerHeaders), never to a shared one (docs/mcp.md).
 */
class TargetLegContext implements PolicyContext {
  readonly method: string;
  readonly path: string;
  readonly query: string;
  readonly host: string;
  readonly scheme: 'http' | 'https';
  readonly remoteAddress: string | undefined;
  readonly remotePort: number | undefined;
  readonly connection?: object;
  readonly downstreamHeaders: PolicyContext['downstreamHeaders'];
  readonly upstreamHeaders: HeaderMap;
  readonly identity: RequestIdentity;
  readonly responseMutations: ResponseMutation[] = [];
  readonly responseFilters: ResponseFilter[] = [];
  readonly upstream: PolicyContext['upstream'];
  readonly names: PolicyContext['names'];
  readonly startTime: number;
  celCache: CelCache | undefined = undefined;
  readonly #parent: PolicyContext;
  readonly #original: Buffer;
  #body: Buffer;

  constructor(parent: PolicyContext, body: string | undefined) {
    this.#parent = parent;
    this.method = parent.method;
    this.path = parent.path;
    this.query = parent.query;
    this.host = parent.host;
    this.scheme = parent.scheme;
    this.remoteAddress = parent.remoteAddress;
    this.remotePort = parent.remotePort;
    if (parent.connection !== undefined) this.connection = parent.connection;
    this.downstreamHeaders = parent.downstreamHeaders;
    this.upstreamHeaders = { ...parent.upstreamHeaders };
    this.identity = { ...parent.identity };
    // Retry and host rewriting are the client request's; a body stream of ext_proc is not this message.
    this.upstream = { ...parent.upstream, bodyStream: undefined };
    this.names = parent.names;
    this.startTime = parent.startTime;
    this.#original = this.#body = Buffer.from(body ?? '');
  }

  /** Read by activationOf (policies/cel.ts): the activation is rebuilt when the message is replaced. */
  get bufferedBody(): Buffer {
    return this.#body;
  }

  /** The message after the steps, when a transformation replaced it. */
  rewrittenBody(): string | undefined {
    return this.#body === this.#original ? undefined : this.#body.toString('utf8');
  }

  readBody(): Promise<Buffer> {
    return Promise.resolve(this.#body);
  }

  replaceBody(body: Buffer): void {
    this.#body = body;
  }

  requestBodyStream(): AsyncIterable<Uint8Array> | null {
    const body = this.#body;
    return body.length === 0 ? null : (async function* () { yield body; })();
  }

  onEnd(listener: () => void): void {
    this.#parent.onEnd(listener);
  }

  cel(): CelInput {
    const input = this.#parent.cel();
    const id = this.identity;
    return { ...input, request: { ...input.request, body: this.#body }, extauthz: id.extauthz, extproc: id.extproc } as CelInput;
  }

  onUsage(listener: (usage: TokenUsage) => void): void {
    this.#parent.onUsage(listener);
  }
}
