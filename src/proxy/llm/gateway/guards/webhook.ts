/**
 * `webhook` (SPEC.md): the guardrail-webhook contract agentgateway documents (the "Guardrail
 * Webhook API": POST `/request` with `{body: {messages: [{role, content}]}}`, POST `/response` with
 * `{body: {choices: [{message: {role, content}}]}}`; the answer is `{action: …}` — a PassAction
 * (`reason` only), a MaskAction (`body` with the same number of messages or choices, masked) or a
 * RejectAction (`body` text and `status_code`)). The webhook is the Service or ProxyBackend of
 * `backendRef`, resolved as extAuth's is; `forwardHeaderMatches` picks the headers it is sent (the
 * client's on requests, the provider's on answers; none by default); `failureMode` decides what a
 * webhook that gives no usable answer means (FailClosed by default: reject).
 *
 * A RejectAction rejects with the guard's configured `response` (status, message), as SPEC.md
 * says for every guard; the webhook's own text is kept as the reason (logs), not shown.
 */
import { RE2JS } from 're2js';
import type { Dispatcher } from 'undici';
import type { ValueMatch } from '../../../../ir/types.ts';
import { httpAgent } from '../../../ext/connections.ts';
import { baseUrl, type ResolvedEndpoint, type ServiceTargets } from '../../../ext/endpoint.ts';
import { PLAIN_BACKEND } from '../../../policies/credentials/backend-credentials.ts';
import type { CompiledGuard, GuardInput, GuardVerdict } from './types.ts';
import { GuardClient, GuardServiceError, isRecord, type GuardCommon, type GuardServices } from './remote.ts';

/** The IR entry member (`webhook`): `backendRef` lowered to `backendKey` by the controller. */
export interface WebhookGuardIR {
  readonly backendKey?: string;
  readonly forwardHeaderMatches?: readonly ValueMatch[];
  readonly failureMode?: 'FailClosed' | 'FailOpen';
}

/** The contract's request bodies. */
export interface PromptMessages { readonly messages: readonly { readonly role: string; readonly content: string }[] }
export interface ResponseChoices { readonly choices: readonly { readonly message: { readonly role: string; readonly content: string } }[] }

/** Headers that describe the gateway's own connection to the webhook: never forwarded, whatever matches. */
const CONNECTION_HEADERS: ReadonlySet<string> = new Set([
  'host', 'content-length', 'content-type', 'transfer-encoding', 'connection', 'keep-alive', 'upgrade', 'te', 'trailer', 'expect', 'proxy-connection',
]);

type HeaderTest = { readonly name: string; test(value: string): boolean };

function compileHeaderMatches(matches: readonly ValueMatch[] | undefined): readonly HeaderTest[] {
  return (matches ?? []).map((m) => {
    const name = m.name.toLowerCase();
    if (m.type !== 'RegularExpression') return { name, test: (v: string) => v === m.value };
    const regex = RE2JS.compile(m.value);
    return { name, test: (v: string) => regex.testExact(v) };
  });
}

/** The headers of `input` that one of the matches selects (each value tested on its own). */
export function forwardedHeaders(tests: readonly HeaderTest[], headers: GuardInput['headers']): Record<string, string[]> {
  const out: Record<string, string[]> = {};
  if (tests.length === 0) return out;
  for (const t of tests) {
    if (CONNECTION_HEADERS.has(t.name)) continue;
    const raw = headers[t.name];
    const values = raw === undefined ? [] : typeof raw === 'string' ? [raw] : raw;
    for (const v of values) {
      if (!t.test(v)) continue;
      const list = (out[t.name] ??= []);
      if (!list.includes(v)) list.push(v);
    }
  }
  return out;
}

export function compileWebhook(config: WebhookGuardIR, common: GuardCommon, services: GuardServices): CompiledGuard {
  if (config.backendKey === undefined) throw new Error('webhook guard: backendRef was not resolved to a backend');
  if (!services.endpoints) throw new Error('webhook guard: no resolver for backends');
  let targets: ServiceTargets;
  try {
    targets = services.endpoints({ backendKey: config.backendKey });
  } catch (err) {
    // The backend has no address now (no ready endpoint): every call fails, and failureMode decides.
    const why = `webhook: ${err instanceof Error ? err.message : String(err)}`;
    return { kind: 'webhook', rejectStatus: common.rejectStatus, rejectMessage: common.rejectMessage, failOpen: config.failureMode === 'FailOpen', check: () => Promise.reject(new GuardServiceError(why)) };
  }
  const tests = compileHeaderMatches(config.forwardHeaderMatches);
  // One client per target (each ready endpoint of the backend), each call to the next in turn.
  const clients = new Map<ResolvedEndpoint, GuardClient>();
  const clientFor = (target: ResolvedEndpoint): GuardClient => {
    let client = clients.get(target);
    if (client) return client;
    let dispatcher: Dispatcher;
    if (services.connections) {
      const lease = services.connections.http(target);
      dispatcher = lease.value;
      services.lifecycle?.onRetire(lease.close);
    } else {
      const agent = httpAgent(target);
      dispatcher = agent;
      services.lifecycle?.onRetire(() => void agent.close());
    }
    const host = target.host.includes(':') ? `[${target.host}]` : target.host;
    const guardTarget = { origin: baseUrl({ ...target, pathPrefix: undefined }), host: `${host}:${target.port}`, tls: target.tls !== undefined && target.tls !== false };
    // No policies: no credential is added, the default timeout applies.
    client = new GuardClient('webhook', guardTarget, undefined, PLAIN_BACKEND, services, dispatcher);
    clients.set(target, client);
    return client;
  };
  for (const target of targets.all) clientFor(target);
  return {
    kind: 'webhook',
    rejectStatus: common.rejectStatus,
    rejectMessage: common.rejectMessage,
    failOpen: config.failureMode === 'FailOpen',
    async check(input: GuardInput, signal: AbortSignal): Promise<GuardVerdict> {
      const isRequest = input.phase === 'request';
      const body: PromptMessages | ResponseChoices = isRequest
        ? { messages: input.segments.map((s) => ({ role: s.role, content: s.text })) }
        : { choices: input.segments.map((s) => ({ message: { role: s.role, content: s.text } })) };
      const answer = await clientFor(targets.next()).post(isRequest ? '/request' : '/response', { body }, signal, forwardedHeaders(tests, input.headers));
      return verdictOf(answer, input);
    },
  };
}

/** RejectAction (status_code) rejects, MaskAction (body) masks, PassAction passes; anything else is no answer. */
function verdictOf(answer: unknown, input: GuardInput): GuardVerdict {
  const action = isRecord(answer) ? answer.action : undefined;
  if (!isRecord(action)) throw new GuardServiceError('webhook answered without an action object');
  const reason = typeof action.reason === 'string' ? action.reason : undefined;
  if (typeof action.status_code === 'number') {
    const said = reason ?? (typeof action.body === 'string' ? action.body : undefined);
    return { action: 'reject', ...(said !== undefined ? { reason: said } : {}) };
  }
  if (action.body === undefined || action.body === null) return { action: 'pass' };
  const masked = maskedTexts(action.body, input.phase === 'request');
  if (masked === undefined || masked.length !== input.segments.length) {
    throw new GuardServiceError(`webhook masked with a body that is not ${input.segments.length} ${input.phase === 'request' ? 'messages' : 'choices'}`);
  }
  return { action: 'mask', segments: masked };
}

function maskedTexts(body: unknown, isRequest: boolean): string[] | undefined {
  if (!isRecord(body)) return undefined;
  const list = isRequest ? body.messages : body.choices;
  if (!Array.isArray(list)) return undefined;
  const texts: string[] = [];
  for (const item of list) {
    const message = isRequest ? item : isRecord(item) ? item.message : undefined;
    if (!isRecord(message) || typeof message.content !== 'string') return undefined;
    texts.push(message.content);
  }
  return texts;
}
