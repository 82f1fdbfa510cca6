/**
 * The cloud-A agent runtime backend (ProxyBackend `spec.cloudA.agentRuntime`): each request the
 * route sends here is one invocation of the runtime (Bedrock AgentCore `InvokeAgentRuntime`,
 * endpoint.ts), after routing and traffic policies ran in the one request lifecycle. Then the
 * backend policy: an invalid one refuses, extAuth and transformation run (gate.ts), and the
 * credentials are written by the shared backend credentials — SigV4 for `bedrock-agentcore` with
 * the Secret's, the environment's or an assumed role's keys, or a bearer token (`key`,
 * `passthrough`, token mechanisms) for a runtime with an inbound JWT authorizer. The payload is
 * read whole (bounded) because SigV4 signs its hash; the answer (JSON, or a text/event-stream)
 * streams back as it comes, never buffered.
 */
import type { IncomingHttpHeaders } from 'node:http';
import { silentLogger, type Logger } from '../../../common/logger.ts';
import type { Dispatcher } from 'undici';
import type { AgentRuntimeIR } from '../../../ir/agent-runtime.ts';
import type { BackendPolicy } from '../../../ir/policy.ts';
import { readBodyBounded } from '../../http/body.ts';
import { requestBody, sendDirect, type DirectResponse, type DownstreamRequest, type DownstreamResponse } from '../../http/downstream.ts';
import { renderGatewayError } from '../../http/error-format.ts';
import { classify, upstreamFailure } from '../../http/errors.ts';
import { endToEndResponseHeaders } from '../../http/headers.ts';
import { gateUpstreamCall } from '../../policies/backend/gate.ts';
import { applyHeaderChanges } from '../../policies/backend/policy-headers.ts';
import { BodyTooLargeError, type PolicyContext } from '../../policies/context.ts';
import { BackendCredentials, CredentialError, CredentialRequestError, CredentialUnavailableError } from '../../policies/credentials/backend-credentials.ts';
import { DEFAULT_MAX_BUFFER_BYTES } from '../../policies/request-context.ts';
import type { BackendHandler, HandlerFactory, HandlerRequest } from '../handlers.ts';
import { AGENT_RUNTIME_SERVICE, ENDPOINT_OVERRIDE_VARIABLE, invocationPath, runtimeOrigin, runtimeRegion } from './endpoint.ts';
import { invocationHeaders, SESSION_HEADER } from './invocation-headers.ts';
import { RuntimePools } from './pools.ts';

/**
 * How long the runtime may take to send its answer's head, and then between two chunks of it,
 * when the backend policy sets no `http.requestTimeout` (undici's own defaults, stated here).
 */
export const DEFAULT_HEAD_TIMEOUT_MS = 300_000;
export const DEFAULT_IDLE_TIMEOUT_MS = 300_000;

/** Every agent runtime backend of the process signs with one credential source (assumed-role sessions cached across configs). */
let shared: BackendCredentials | undefined;

export const agentRuntimeHandlerFactory: HandlerFactory = (backend, deps) =>
  backend.agentRuntime ? new AgentRuntimeHandler(backend.agentRuntime, { logger: deps.logger, key: backend.key }) : undefined;

export interface AgentRuntimeOptions {
  /** The environment: AWS_REGION, the endpoint override and (through the credentials) AWS_* keys. Default process.env. */
  readonly env?: NodeJS.ProcessEnv;
  readonly credentials?: BackendCredentials;
  readonly logger?: Logger;
  /** The backend's key (logs, failure causes). */
  readonly key?: string;
}

export class AgentRuntimeHandler implements BackendHandler {
  readonly #ir: AgentRuntimeIR;
  readonly #path: string;
  readonly #env: NodeJS.ProcessEnv;
  readonly #override: string | undefined;
  readonly #credentials: BackendCredentials | undefined;
  readonly #pools = new RuntimePools();
  readonly #logger: Logger;
  readonly #key: string;

  constructor(ir: AgentRuntimeIR, options: AgentRuntimeOptions = {}) {
    this.#ir = ir;
    this.#path = invocationPath(ir);
    this.#env = options.env ?? process.env;
    this.#override = this.#env[ENDPOINT_OVERRIDE_VARIABLE] || undefined;
    // An environment of its own (tests, tools) signs with that environment's keys too.
    this.#credentials = options.credentials ?? (options.env ? new BackendCredentials({ env: options.env }) : undefined);
    this.#logger = options.logger ?? silentLogger;
    this.#key = options.key ?? ir.runtimeId;
  }

  handle(req: DownstreamRequest, res: DownstreamResponse, request: HandlerRequest): void {
    this.#invoke(req, res, request).catch((err: unknown) => {
      // A bug, not a refusal: logged, and answered 500 if nothing was sent yet.
      this.#logger.error({ backend: this.#key, err: String(err) }, 'agent runtime invocation failed');
      if (!res.headersSent) refuse(res, request, 500, 'internal_error', 'the agent runtime invocation failed');
      else res.destroy();
    });
  }

  async #invoke(req: DownstreamRequest, res: DownstreamResponse, request: HandlerRequest): Promise<void> {
    const policy = request.backendPolicy;
    const ctx = request.policy;
    // The backend-policy layer first: an invalid policy, an extAuth refusal or a transformation answer ends here, nothing sent.
    let gated;
    try {
      const gating = gateUpstreamCall(request.backendRuntime, policy, ctx, new Map());
      gated = gating instanceof Promise ? await gating : gating;
    } catch (err) {
      if (err instanceof BodyTooLargeError) return refuse(res, request, 413, 'payload_too_large', err.message);
      this.#logger.error({ backend: this.#key, err: String(err) }, 'backend policy failed on an agent runtime invocation');
      return refuse(res, request, 500, 'backend_policy_failed', 'the backend policy could not be applied');
    }
    if (gated.kind === 'refused') return answer(res, request, gated.response);

    const region = runtimeRegion(this.#ir, policy?.auth?.cloudA?.region, this.#env);
    // No region, no endpoint: fail closed with the cause in the gateway's words (the operator's fix is in config).
    if (region === undefined) return refuse(res, request, 500, 'backend_policy_failed', 'the agent runtime has no region: set auth.cloudA.region, name the runtime by its ARN, or set AWS_REGION');
    const origin = runtimeOrigin(region, this.#override);

    let body: Buffer;
    try {
      body = await readPayload(req, ctx);
    } catch (err) {
      if (err instanceof BodyTooLargeError) return refuse(res, request, 413, 'payload_too_large', err.message);
      return refuse(res, request, 400, 'bad_request', 'the request body could not be read');
    }
    const { headers, sessionId } = invocationHeaders(request.headers, body.length > 0);
    applyHeaderChanges(headers, gated.headers);
    const method = req.method ?? 'POST';

    let signed;
    try {
      const credentials = this.#credentials ?? (shared ??= new BackendCredentials());
      const writing = credentials.apply(
        { host: origin.authority, method, path: this.#path, headers, body },
        policy?.auth, ctx?.identity ?? {}, ctx ? () => ctx.cel() : undefined,
        { sigv4: { service: AGENT_RUNTIME_SERVICE, region }, signedHeaders: 'all' },
      );
      signed = writing instanceof Promise ? await writing : writing;
    } catch (err) {
      return credentialFailure(res, request, err);
    }

    let dispatcher: Dispatcher;
    try {
      dispatcher = this.#pools.acquire(origin, policy);
    } catch (err) {
      return refuse(res, request, 500, 'backend_policy_failed', `the backend policy could not be applied: ${(err as Error).message}`);
    }
    await send(dispatcher, res, request, {
      method, path: signed.path, headers: { ...signed.headers, host: origin.authority }, body, sessionId,
      headTimeoutMs: requestTimeoutOf(request, policy) ?? DEFAULT_HEAD_TIMEOUT_MS, backend: this.#key,
    });
  }

  async close(): Promise<void> {
    await this.#pools.close();
  }
}

/** The invocation payload: through the policy context when one exists (it may hold a buffered or transformed body, and knows the frontend's limit), else read here under the default limit. */
function readPayload(req: DownstreamRequest, ctx: PolicyContext | undefined): Promise<Buffer> {
  if (ctx) return ctx.readBody();
  const stream = requestBody(req);
  if (!stream) return Promise.resolve(Buffer.alloc(0));
  const declared = Number(req.headers['content-length']);
  if (Number.isFinite(declared) && declared > DEFAULT_MAX_BUFFER_BYTES) return Promise.reject(new BodyTooLargeError(DEFAULT_MAX_BUFFER_BYTES, 'request body'));
  return readBodyBounded(stream, DEFAULT_MAX_BUFFER_BYTES, { what: 'request body', destroy: false });
}

function requestTimeoutOf(request: HandlerRequest, policy: BackendPolicy | undefined): number | undefined {
  const ms = request.backendRuntime?.requestTimeoutMs ?? policy?.http?.requestTimeoutMs;
  return ms !== undefined && ms > 0 ? ms : undefined;
}

interface Invocation {
  readonly method: string;
  readonly path: string;
  readonly headers: Record<string, string | string[]>;
  readonly body: Buffer;
  readonly sessionId: string;
  readonly headTimeoutMs: number;
  /** The backend's key, for the failure's cause (never shown to the client). */
  readonly backend: string;
}

/** Sends the invocation and streams the answer back with backpressure; gateway errors before the head, a cut connection after. */
async function send(dispatcher: Dispatcher, res: DownstreamResponse, request: HandlerRequest, call: Invocation): Promise<void> {
  const abort = new AbortController();
  res.on('close', () => abort.abort());
  let answer: Dispatcher.ResponseData;
  try {
    answer = await dispatcher.request({
      method: call.method as Dispatcher.HttpMethod, path: call.path, headers: call.headers, body: call.body.length > 0 ? call.body : null,
      headersTimeout: call.headTimeoutMs, bodyTimeout: DEFAULT_IDLE_TIMEOUT_MS, signal: abort.signal,
    });
  } catch (err) {
    if (abort.signal.aborted) return request.done(499, 0);
    // Classified as every upstream failure is (connect failed, timed out, reset), in the gateway's words.
    const { status, error } = classify(upstreamFailure(call.backend, err));
    return refuse(res, request, status, error.code, error.message);
  }
  const status = answer.statusCode;
  const headers = endToEndResponseHeaders(answer.headers as IncomingHttpHeaders);
  // The runtime echoes the session id; if it does not, the client still learns the one the gateway made.
  headers[SESSION_HEADER] ??= call.sessionId;
  res.writeHead(status, headers);
  let bytes = 0;
  const stream = answer.body;
  await new Promise<void>((resolve) => {
    stream.on('data', (chunk: Buffer) => {
      bytes += chunk.length;
      if (!res.write(chunk)) {
        stream.pause();
        res.once('drain', () => stream.resume());
      }
    });
    stream.on('end', () => {
      res.end();
      resolve();
    });
    stream.on('error', () => {
      // Mid-answer the head is gone: cutting the connection is how the client learns the answer is incomplete.
      res.destroy();
      resolve();
    });
  });
  request.done(status, bytes);
}

function credentialFailure(res: DownstreamResponse, request: HandlerRequest, err: unknown): void {
  if (err instanceof CredentialRequestError) return refuse(res, request, err.status, 'backend_credential_rejected', err.message);
  if (err instanceof CredentialUnavailableError) return refuse(res, request, 502, 'backend_token_endpoint_failed', 'the gateway could not obtain a token for the backend');
  // No credential, no invocation (fail closed); which keys or variables are missing stays in the gateway's configuration.
  const message = err instanceof CredentialError ? 'the gateway has no credential for the backend' : `the backend policy could not be applied: ${(err as Error).message}`;
  refuse(res, request, 500, 'backend_policy_failed', message);
}

/** A policy's answer (extAuth denial, transformation answer, fail-closed refusal), marked as the gateway's. */
function answer(res: DownstreamResponse, request: HandlerRequest, response: DirectResponse): void {
  res.gatewayAnswer?.();
  request.done(sendDirect(res, response, []), 0);
}

/** The gateway's own refusal, in the gateway's error shape (docs/errors.md). */
function refuse(res: DownstreamResponse, request: HandlerRequest, status: number, code: string, message: string): void {
  res.gatewayAnswer?.();
  const body = renderGatewayError(status, { code, message }, 'gateway');
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
  res.end(body);
  request.done(status, Buffer.byteLength(body));
}
