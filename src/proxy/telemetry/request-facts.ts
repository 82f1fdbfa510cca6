/**
 * What a request has earned by its end, for the CEL expressions that run then (tracing span
 * attributes, the access log's filter and attributes): the identities its policies established
 * (`jwt`, `apiKey`, `basicAuth`, `extauthz` … through the policy context's CEL input) and the LLM
 * and MCP facts learnt on the way (`llm.*`, `mcp.*`).
 *
 * The facts travel with the request's async context, entered only when something at the end will
 * read them (a sampled trace, or an access log with a filter or attributes): code on the request's
 * path asks `requestFacts()` and gets undefined, at the cost of one lookup, otherwise.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import { createActivation, type Activation, type CelInput, type LlmInput, type McpInput } from '../../cel/index.ts';
import type { DownstreamRequest } from '../http/downstream.ts';

export class RequestFacts {
  #llm: LlmInput | undefined;
  #mcp: McpInput | undefined;
  /** The policy context's CEL input, when traffic policies ran: identities they established. */
  #cel: (() => CelInput) | undefined;

  /** LLM facts (`llm.*`): provider, models, streaming, token counts; later notes win per field. */
  noteLlm(llm: LlmInput): void {
    this.#llm = { ...this.#llm, ...llm };
  }

  /** MCP facts (`mcp.*`): method, target, tool, prompt, resource. */
  noteMcp(mcp: McpInput): void {
    this.#mcp = { ...this.#mcp, ...mcp };
  }

  /** Where the end-of-request expressions read the request from when policies ran. */
  useCel(source: () => CelInput): void {
    this.#cel = source;
  }

  get llm(): LlmInput | undefined {
    return this.#llm;
  }

  get mcp(): McpInput | undefined {
    return this.#mcp;
  }

  policyInput(): CelInput | undefined {
    return this.#cel?.();
  }
}

/** What runs in a request's async context: its trace when sampled, its facts always. */
export interface RequestScope<T = unknown> {
  readonly trace: T | undefined;
  readonly facts: RequestFacts;
}

const scope = new AsyncLocalStorage<RequestScope>();

/** The current request's scope; undefined when nothing at its end reads facts. */
export function currentScope(): RequestScope | undefined {
  return scope.getStore();
}

/** The facts of the request this code runs for; undefined when nothing reads them. */
export function requestFacts(): RequestFacts | undefined {
  return scope.getStore()?.facts;
}

/** Runs the rest of a request inside its scope. */
export function runInScope<R>(requestScope: RequestScope, fn: () => R): R {
  return scope.run(requestScope, fn);
}

/** The names a request's end is labelled with. */
export interface EndNames {
  readonly gateway: string;
  readonly listener: string;
  readonly route: string;
  readonly backend: string;
}

/** How a request ended, for the expressions that run then. */
export interface Ending {
  readonly status: number;
  readonly names: EndNames;
  readonly facts: RequestFacts | undefined;
}

/**
 * What expressions see: the request and its source and, at the end, the answer and what was
 * learnt (the policy context's view of the request when policies ran, else the request as sent).
 */
export function requestActivation(req: DownstreamRequest, scheme: 'http' | 'https', ending: Ending | undefined): Activation {
  const host = req.headers[':authority'] ?? req.headers.host;
  const policy = ending?.facts?.policyInput();
  const llm = ending?.facts?.llm;
  const mcp = ending?.facts?.mcp;
  return createActivation({
    ...policy,
    request: policy?.request ?? {
      method: req.method ?? 'GET', url: req.url ?? '/', host: typeof host === 'string' ? host : undefined, scheme,
      headers: req.headers, version: req.httpVersion === '2.0' ? 'HTTP/2' : `HTTP/${req.httpVersion}`,
    },
    source: { address: req.socket.remoteAddress ?? '', port: req.socket.remotePort ?? 0 },
    ...(ending ? {
      response: { code: ending.status },
      route: policy?.route ?? { name: ending.names.route },
      backend: policy?.backend ?? { name: ending.names.backend },
      gateway: policy?.gateway ?? { name: ending.names.gateway, listener: ending.names.listener },
      ...(llm || policy?.llm ? { llm: { ...policy?.llm, ...llm } } : {}),
      ...(mcp || policy?.mcp ? { mcp: { ...policy?.mcp, ...mcp } } : {}),
    } : {}),
  });
}
