/**
 * Realtime (OpenAI-style WebSocket sessions) for an AI backend. The gateway terminates both
 * WebSockets: it opens the provider's socket first — at the planned path, with the model override
 * or alias in the query and the backend's credential in place of the client's — and only then
 * completes the client's upgrade, so a refusal (no realtime API, bad key, provider down) reaches the
 * client as a plain HTTP answer in OpenAI's error format. Messages are relayed both ways unchanged
 * (text stays text, binary stays binary); `response.done` events are read for token usage.
 */
import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import type { Socket } from 'node:net';
import type { buildConnector } from 'undici';
import { WebSocket, WebSocketServer, type ClientOptions, type RawData } from 'ws';
import type { Logger } from '../../../common/logger.ts';
import type { CelInput } from '../../../cel/index.ts';
import type { AiPolicy, AiProviderIR } from '../../../ir/ai.ts';
import type { BackendPolicy } from '../../../ir/policy.ts';
import { connectorFor } from '../../policies/backend/connection.ts';
import type { HandlerRequest } from '../../backends/handlers.ts';
import type { PolicyContext, RequestIdentity } from '../../policies/context.ts';
import { renderError } from '../translate/errors.ts';
import { planRequest } from '../translate/plan.ts';
import { makeUsage, type Usage } from '../translate/usage.ts';
import { CredentialError, type LlmCredentials } from './credentials/index.ts';
import { AiPolicyError } from './body-policy.ts';
import { GuardConfigError, promptGuardOf } from './guards/index.ts';
import { RealtimeGuard, type RealtimeVerdict } from './guards/realtime.ts';
import { clientHostFor, hostHeader, providerConnection, type ReplicaTurns } from './upstream.ts';
import type { ProviderHealth } from './provider-health.ts';
import { llmAttemptSpan, type LlmAttemptSpan } from '../../telemetry/tracing/genai.ts';
import { applyHeaderChanges, NO_HEADER_CHANGES, policyHeaderChanges, type HeaderChanges } from '../../policies/backend/policy-headers.ts';

/** Client headers that select API behaviour (beta surface, billing scope); never credentials. */
const FORWARDED = ['openai-beta', 'openai-organization', 'openai-project', 'user-agent'] as const;
/** Browsers put their key in a subprotocol; the backend's credential replaces it, so it never travels on. */
const KEY_PROTOCOL_PREFIX = 'openai-insecure-api-key.';
const HANDSHAKE_TIMEOUT_MS = 30_000;
/** Relay backpressure: stop reading one side while the other has this much unsent. */
const HIGH_WATER_BYTES = 4 * 1024 * 1024;
const LOW_WATER_BYTES = 1024 * 1024;
const MAX_REFUSAL_BODY = 64 * 1024;

export interface RealtimeAttempt {
  readonly provider: AiProviderIR;
  readonly policy: BackendPolicy | undefined;
  readonly ai: AiPolicy | undefined;
  /** Header changes the provider's backend request steps (extAuth, transformation) made. */
  readonly stepHeaders?: HeaderChanges;
}

export interface RealtimeDeps {
  readonly backendKey: string;
  readonly logger: Logger;
  readonly credentials: LlmCredentials;
  /** Where to connect: a custom provider's Service replicas in turn (shared with the HTTP routes). */
  readonly replicas: ReplicaTurns;
  /** The backend's provider health (shared with the HTTP routes): every handshake that reaches a provider feeds it. */
  readonly health: ProviderHealth;
  /** Usage of one response in the session (`response.done`). */
  account(provider: string, model: string, usage: Usage, policy: PolicyContext | undefined): void;
}

type Opened = { readonly kind: 'open'; readonly upstream: WebSocket; readonly model: string; readonly early: [RawData, boolean][] };
type Refused = { readonly kind: 'refused'; readonly status: number; readonly headers: Record<string, string>; readonly body: Buffer; readonly retryable: boolean };

export class RealtimeRelay {
  readonly #deps: RealtimeDeps;
  /** The subprotocol the provider chose, per client request, for the client's handshake. */
  readonly #chosen = new WeakMap<IncomingMessage, string>();
  readonly #server: WebSocketServer;
  readonly #sessions = new Set<WebSocket>();

  constructor(deps: RealtimeDeps) {
    this.#deps = deps;
    this.#server = new WebSocketServer({
      noServer: true, perMessageDeflate: false, clientTracking: false,
      handleProtocols: (offered, req) => {
        const chosen = this.#chosen.get(req);
        return chosen !== undefined && offered.has(chosen) ? chosen : false;
      },
    });
  }

  /** Serves one upgrade: providers tried in order until one opens; the last refusal is what the client gets. */
  async serve(req: IncomingMessage, socket: Duplex, head: Buffer, request: HandlerRequest, attempts: readonly RealtimeAttempt[]): Promise<void> {
    socket.on('error', () => socket.destroy());
    let last: Refused | undefined;
    for (const attempt of attempts) {
      if (socket.destroyed) return request.done(499, 0);
      let outcome: Opened | Refused;
      // Traced requests only: a GenAI CLIENT span per provider handshake; the one that opens lasts the session.
      const span = llmAttemptSpan(attempt.provider, 'Realtime');
      try {
        outcome = await this.#open(req, request, attempt, span);
      } catch (err) {
        span?.end({ error: err });
        // A credential this request cannot have (assumed-role session name or tag from CEL): refused, no other provider.
        if (err instanceof AiPolicyError) {
          outcome = refusal(err.status, err.message, false);
          if (!socket.destroyed) writeHttp(socket, outcome.status, outcome.headers, outcome.body);
          return request.done(outcome.status, outcome.body.length);
        }
        if (!(err instanceof CredentialError)) throw err;
        this.#deps.logger.error({ backend: this.#deps.backendKey, provider: attempt.provider.name, err: err.message }, 'LLM provider credentials unavailable');
        outcome = refusal(502, 'the gateway could not authenticate to the provider', true);
      }
      if (outcome.kind === 'open') return this.#accept(req, socket, head, request, attempt, outcome, span);
      span?.end({ status: outcome.status });
      last = outcome;
      if (!outcome.retryable) break;
      this.#deps.logger.warn({ backend: this.#deps.backendKey, provider: attempt.provider.name, status: outcome.status }, 'LLM realtime provider refused; trying the next one');
    }
    const answer = last ?? refusal(503, 'no provider is available', false);
    if (socket.destroyed) return request.done(499, 0);
    writeHttp(socket, answer.status, answer.headers, answer.body);
    request.done(answer.status, answer.body.length);
  }

  async close(): Promise<void> {
    for (const ws of this.#sessions) ws.terminate();
    this.#sessions.clear();
    await new Promise<void>((resolve) => this.#server.close(() => resolve()));
  }

  async #open(req: IncomingMessage, request: HandlerRequest, a: RealtimeAttempt, span: LlmAttemptSpan | undefined): Promise<Opened | Refused> {
    // Prompt guards that cannot be compiled refuse the session (500), as on the HTTP routes.
    try {
      promptGuardOf(a.ai);
    } catch (err) {
      if (err instanceof GuardConfigError) throw new AiPolicyError(err.message, 500);
      throw err;
    }
    const plan = planRequest({ routeType: 'Realtime', provider: a.provider.provider, body: new Uint8Array(0), path: request.path, method: 'GET', modelAliases: a.ai?.modelAliases });
    if (plan.kind === 'respond') return { kind: 'refused', status: plan.response.status, headers: { ...plan.response.headers }, body: Buffer.from(plan.response.body), retryable: false };
    const up = plan.upstream;
    const host = hostHeader(up);
    // traffic.hostRewrite None: the client's Host is sent (and signed); the URL, hence SNI, stays the provider's.
    const clientHost = clientHostFor(request);
    const base: Record<string, string> = { ...up.headers };
    for (const name of FORWARDED) {
      const v = req.headers[name];
      if (typeof v === 'string') base[name] = v;
    }
    // What filters, traffic policies and the backend request steps set or removed reaches the provider,
    // as on the HTTP routes (docs/llm.md); the credential written next still wins.
    const steps = a.stepHeaders ?? NO_HEADER_CHANGES;
    applyHeaderChanges(base, steps);
    applyHeaderChanges(base, policyHeaderChanges(req.headers, request.headers, request.headersMayHaveChanged === true || steps.size > 0));
    const identity: RequestIdentity = request.policy?.identity ?? {};
    // The request's CEL input: token mechanisms read the client's subject token from it, as on the HTTP routes.
    const cel = (): CelInput => request.policy?.cel() ?? { request: { method: 'GET', url: req.url ?? '/', headers: req.headers } };
    const signed = await this.#deps.credentials.apply({ host: clientHost ?? host, method: 'GET', path: up.path, headers: base, body: new Uint8Array(0), credential: up.credential }, a.policy?.auth, identity, cel);
    const { host: _host, ...headers } = signed.headers;
    if (clientHost !== undefined) headers.host = clientHost;
    const protocols = offeredProtocols(req).filter((p) => !p.startsWith(KEY_PROTOCOL_PREFIX));
    // The backend policy's connection (TLS with its CA, SNI and checks, a tunnel, tcp settings) through the same
    // connector as an HTTP provider call and a Service upgrade; WebSocket is HTTP/1.1, so ALPN offers only http/1.1.
    const settings = a.policy ? providerConnection(a.policy, up.tls) : undefined;
    const tls = up.tls || settings?.tls !== undefined;
    const connection = settings ? { createConnection: socketVia(connectorFor({ ...settings, version: 'http1' }, up.host), tls) } : {};
    const timeoutMs = Math.min(a.policy?.http?.requestTimeoutMs ?? HANDSHAKE_TIMEOUT_MS, HANDSHAKE_TIMEOUT_MS);
    // A custom provider's Service replica is dialled by address; Host and TLS keep the Service's name.
    const at = this.#deps.replicas.target(a.provider, up);
    const url = `${tls ? 'wss' : 'ws'}://${at === up ? host : hostHeader(at)}${signed.path}`;
    if (at !== up) headers.host = clientHost ?? host;
    // The session span's traceparent goes on the handshake, after signing (as on the HTTP routes).
    span?.request(plan.model, true, headers, { host: up.host, port: up.port });
    // Provider health, as for an HTTP attempt (provider-health.ts): the handshake's answer — opened (101),
    // refused with a status (a 429's Retry-After evicts), or none (502, or 504 on the handshake timeout).
    const health = this.#deps.health;
    const index = health.indexOf(a.provider.name);
    const spec = a.policy?.health;
    const started = health.begin(index);

    return new Promise((resolve, reject) => {
      let upstream: WebSocket;
      try {
        upstream = new WebSocket(url, protocols, { headers, perMessageDeflate: false, handshakeTimeout: timeoutMs, followRedirects: false, ...connection });
      } catch (err) {
        // Nothing reached the provider (a header value ws refuses): no outcome for its health, only the attempt ends.
        health.abandon(index, started);
        reject(err instanceof Error ? err : new Error(String(err)));
        return;
      }
      const early: [RawData, boolean][] = [];
      let settled = false;
      const settle = (v: Opened | Refused) => {
        if (settled) return;
        settled = true;
        resolve(v);
      };
      upstream.on('message', (data, isBinary) => early.push([data, isBinary]));
      upstream.once('open', () => {
        if (!settled) health.answered(index, started, 101, {}, spec);
        settle({ kind: 'open', upstream, model: plan.model, early });
      });
      upstream.once('unexpected-response', (_req, res) => {
        const chunks: Buffer[] = [];
        let size = 0;
        res.on('data', (c: Buffer) => {
          if (size < MAX_REFUSAL_BODY) chunks.push(c);
          size += c.length;
        });
        const finish = () => {
          const status = res.statusCode ?? 502;
          if (!settled) health.answered(index, started, status, res.headers, spec);
          const body = Buffer.concat(chunks).subarray(0, MAX_REFUSAL_BODY);
          const type = res.headers['content-type'];
          settle({ kind: 'refused', status, headers: { 'content-type': typeof type === 'string' ? type : 'application/json' }, body, retryable: status === 429 || status >= 500 });
          upstream.terminate();
        };
        res.once('end', finish);
        res.once('error', finish);
      });
      upstream.on('error', (err) => {
        const timeout = /handshake has timed out/i.test(err.message);
        if (!settled) health.failed(index, started, timeout ? 504 : 502, spec);
        this.#deps.logger.warn({ backend: this.#deps.backendKey, provider: a.provider.name, err: err.message }, 'LLM realtime provider unreachable');
        settle(timeout ? refusal(504, 'the provider did not answer in time', true) : refusal(502, 'could not reach the provider', true));
      });
    });
  }

  /** The session's guard and how a rejection ends it: the error event to the client, then both sockets closed (1008, policy violation). */
  #realtimeGuard(guard: Parameters<typeof RealtimeGuard.applies>[0] & object, req: IncomingMessage, a: RealtimeAttempt, client: WebSocket, upstream: WebSocket): { guard: RealtimeGuard; reject: (event: string) => void } {
    const abort = new AbortController();
    client.once('close', () => abort.abort());
    const logger = this.#deps.logger;
    const backend = this.#deps.backendKey;
    const realtimeGuard = new RealtimeGuard(guard, {
      headers: req.headers, signal: abort.signal,
      onFailure: (g, err) => logger.warn({ backend, provider: a.provider.name, guard: g.kind, failOpen: g.failOpen, err: String(err) }, 'prompt guard failed'),
    });
    let ended = false;
    const reject = (event: string) => {
      if (ended) return;
      ended = true;
      logger.info({ backend, provider: a.provider.name }, 'prompt guard rejected a realtime message; closing the session');
      upstream.close(1008, 'guard_rejected');
      if (client.readyState !== WebSocket.OPEN) return;
      client.send(event, () => client.close(1008, 'guard_rejected'));
    };
    return { guard: realtimeGuard, reject };
  }

  #accept(req: IncomingMessage, socket: Duplex, head: Buffer, request: HandlerRequest, a: RealtimeAttempt, opened: Opened, span: LlmAttemptSpan | undefined): void {
    const { upstream } = opened;
    if (socket.destroyed) {
      upstream.terminate();
      span?.end({ status: 499 });
      return request.done(499, 0);
    }
    if (upstream.protocol) this.#chosen.set(req, upstream.protocol);
    upstream.removeAllListeners('error');
    upstream.on('error', () => upstream.terminate());
    let accepted = false;
    // ws completes a valid handshake synchronously; an invalid one is answered 400 and the socket destroyed.
    this.#server.handleUpgrade(req, socket, head, (client) => {
      accepted = true;
      request.done(101, 0);
      this.#sessions.add(client).add(upstream);
      // Messages that arrived while the client's handshake was pending were collected in `early`.
      upstream.removeAllListeners('message');
      // The session's span (traced requests) ends with the session, carrying its token usage summed.
      span?.outlivesRequest();
      let sessionUsage: Usage | undefined;
      const onText = (text: string) => {
        const usage = responseDoneUsage(text);
        if (!usage) return;
        this.#deps.account(a.provider.name, opened.model, usage, request.policy);
        if (span) sessionUsage = sessionUsage ? addUsage(sessionUsage, usage) : usage;
      };
      // `streaming: Enabled` prompt guards judge text messages both ways (guards/realtime.ts); a rejection ends the session.
      const guard = promptGuardOf(a.ai);
      const guarded = RealtimeGuard.applies(guard) ? this.#realtimeGuard(guard, req, a, client, upstream) : undefined;
      if (guarded) {
        relay(upstream, client, onText, (text) => guarded.guard.fromProvider(text), guarded.reject, opened.early.splice(0));
        relay(client, upstream, undefined, (text) => guarded.guard.fromClient(text), guarded.reject);
      } else {
        for (const [data, isBinary] of opened.early.splice(0)) {
          if (!isBinary) onText(data.toString());
          client.send(data, { binary: isBinary });
        }
        relay(upstream, client, onText);
        relay(client, upstream);
      }
      client.on('error', () => client.terminate());
      const forget = () => {
        this.#sessions.delete(client);
        this.#sessions.delete(upstream);
        guarded?.guard.end();
        if (span) {
          if (sessionUsage) span.usage(sessionUsage);
          span.end({ status: 101 });
        }
      };
      client.once('close', forget);
      upstream.once('close', forget);
    });
    if (!accepted) {
      upstream.terminate();
      span?.end({ status: 400 });
      request.done(400, 0);
    }
  }
}

/**
 * Messages from `from` to `to` as they are, with backpressure, and closes propagated. With `judge`
 * (prompt guards), text messages are sent as the guards say, in order even when a guard answers
 * later (messages wait behind one being judged); a rejection calls `reject` and nothing more is sent.
 * `early` are messages that arrived before the relay started, relayed first.
 */
function relay(from: WebSocket, to: WebSocket, onText?: (text: string) => void, judge?: (text: string) => RealtimeVerdict | Promise<RealtimeVerdict>, reject?: (event: string) => void, early: readonly [RawData, boolean][] = []): void {
  const forward = (data: RawData | string, isBinary: boolean) => {
    if (to.readyState !== WebSocket.OPEN) return;
    to.send(data, { binary: isBinary }, () => {
      if (from.isPaused && to.bufferedAmount < LOW_WATER_BYTES) from.resume();
    });
    if (to.bufferedAmount > HIGH_WATER_BYTES) from.pause();
  };
  let rejected = false;
  const apply = (v: RealtimeVerdict) => {
    if (rejected) return;
    // Several messages when a guard batch releases what it held; none while it holds them.
    if (v.kind === 'send') {
      for (const text of v.texts) forward(text, false);
      return;
    }
    rejected = true;
    reject?.(v.event);
  };
  /** Undefined when done now; a promise while a guard is still judging. */
  const judged = (data: RawData, isBinary: boolean): Promise<void> | undefined => {
    if (rejected) return undefined;
    if (onText && !isBinary) onText(data.toString());
    if (!judge || isBinary) {
      forward(data, isBinary);
      return undefined;
    }
    const verdict = judge(data.toString());
    if (!(verdict instanceof Promise)) {
      apply(verdict);
      return undefined;
    }
    // The runner applies failureMode itself; a promise that still fails is a gateway fault: fail closed.
    return verdict.then(apply, () => apply({ kind: 'reject', event: JSON.stringify({ type: 'error', event_id: 'event_guard_failed', error: { type: 'server_error', code: 'guard_rejected', message: 'the prompt guard failed', param: null } }) }));
  };
  let pending: Promise<void> | undefined;
  const settle = (p: Promise<void>) => {
    const mine: Promise<void> = p.then(() => {
      if (pending === mine) pending = undefined;
    });
    pending = mine;
  };
  // Messages keep their order behind one whose guard answers asynchronously.
  const onMessage = (data: RawData, isBinary: boolean) => {
    if (pending) return settle(pending.then(() => judged(data, isBinary)));
    const later = judged(data, isBinary);
    if (later) settle(later);
  };
  for (const [data, isBinary] of early) onMessage(data, isBinary);
  from.on('message', onMessage);
  from.on('close', (code, reason) => {
    if (to.readyState === WebSocket.CLOSED || to.readyState === WebSocket.CLOSING) return;
    if (code === 1006) return to.terminate();
    if (code === 1005 || !sendableCode(code)) return to.close();
    to.close(code, reason);
  });
}

/**
 * ws's `createConnection` (handed to node's http client, which accepts a socket made later through
 * its callback) backed by an undici-style connector: the socket comes back connected, TLS done.
 */
function socketVia(connect: buildConnector.connector, tls: boolean): NonNullable<ClientOptions['createConnection']> {
  return ((options: { host?: string; port?: number | string }, oncreate: (err: Error | null, socket?: Socket) => void) => {
    const host = options.host ?? 'localhost';
    connect({ hostname: host, host, port: String(options.port ?? (tls ? 443 : 80)), protocol: tls ? 'https:' : 'http:', servername: undefined }, (err, socket) => {
      if (err) oncreate(err);
      else oncreate(null, socket as Socket);
    });
    return undefined;
  }) as unknown as NonNullable<ClientOptions['createConnection']>;
}

function sendableCode(code: number): boolean {
  return (code >= 1000 && code <= 1014 && code !== 1004 && code !== 1005 && code !== 1006) || (code >= 3000 && code <= 4999);
}

function offeredProtocols(req: IncomingMessage): string[] {
  const raw = req.headers['sec-websocket-protocol'];
  if (typeof raw !== 'string') return [];
  return raw.split(',').map((p) => p.trim()).filter((p) => p !== '');
}

/**
 * The usage of a `response.done` event (OpenAI Realtime): `response.usage` with input/output/total
 * tokens and `input_token_details.cached_tokens`. Undefined for every other message; audio deltas
 * are not parsed (a substring check first).
 */
export function responseDoneUsage(text: string): Usage | undefined {
  if (!text.includes('"response.done"')) return undefined;
  let event: { type?: unknown; response?: { usage?: Record<string, unknown> | null } };
  try {
    event = JSON.parse(text) as typeof event;
  } catch {
    return undefined;
  }
  const u = event.type === 'response.done' ? event.response?.usage : undefined;
  if (!u || typeof u !== 'object') return undefined;
  const num = (v: unknown) => (typeof v === 'number' && Number.isFinite(v) ? v : 0);
  const details = (u.input_token_details ?? {}) as Record<string, unknown>;
  return makeUsage({
    inputTokens: num(u.input_tokens), outputTokens: num(u.output_tokens),
    ...(typeof u.total_tokens === 'number' ? { totalTokens: u.total_tokens } : {}),
    cachedInputTokens: num(details.cached_tokens),
  });
}

/** Two usages of one session summed (the session span reports the session's tokens). */
function addUsage(a: Usage, b: Usage): Usage {
  return makeUsage({
    inputTokens: a.inputTokens + b.inputTokens, outputTokens: a.outputTokens + b.outputTokens, totalTokens: a.totalTokens + b.totalTokens,
    cachedInputTokens: (a.cachedInputTokens ?? 0) + (b.cachedInputTokens ?? 0),
    cacheWriteTokens: (a.cacheWriteTokens ?? 0) + (b.cacheWriteTokens ?? 0),
    reasoningTokens: (a.reasoningTokens ?? 0) + (b.reasoningTokens ?? 0),
  });
}

function refusal(status: number, message: string, retryable: boolean): Refused {
  const r = renderError({ status, message }, 'openai');
  return { kind: 'refused', status: r.status, headers: { ...r.headers }, body: Buffer.from(r.body), retryable };
}

function writeHttp(socket: Duplex, status: number, headers: Readonly<Record<string, string>>, body: Buffer): void {
  if (!socket.writable) return;
  let head = `HTTP/1.1 ${status} ${status < 400 ? 'OK' : 'Error'}\r\n`;
  for (const [name, value] of Object.entries(headers)) if (name !== 'content-length' && name !== 'connection') head += `${name}: ${value}\r\n`;
  socket.end(Buffer.concat([Buffer.from(`${head}content-length: ${body.length}\r\nconnection: close\r\n\r\n`, 'latin1'), body]));
}
