/**
 * The member × kind matrix (issue 12's acceptance suite): every traffic and backend member of
 * SPEC.md on a Service backend, an `ai` backend and an `mcp` backend, one named row per member ×
 * kind, through the real clients (plain HTTP, the official `openai` / `@anthropic-ai/sdk` SDKs, the
 * MCP SDK client).
 *
 * Each group file starts one gateway: every *variant* (a member configured one way) gets, per kind,
 * an HTTPRoute `<variant>-<kind>` matching PathPrefix `/<variant>/<kind>` and a ProxyPolicy of the
 * same name on it. One policy per kind keeps budgets (rate limits) apart and makes the status
 * message of each policy speak of exactly one kind.
 *
 * A row either observes the member's effect through the client, or — where the translator reports
 * the member as not applied on that kind (docs/policies.md "What is not applied yet") — asserts the
 * condition (reason and path). `appliedOrReported` decides which from the status, so a row never
 * passes on neither: an ignored member that is not reported fails its effect assertion.
 */
import assert from 'node:assert/strict';
import { it, type TestContext } from 'node:test';
import Anthropic from '@anthropic-ai/sdk';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { Client as McpClient } from '@modelcontextprotocol/sdk/client/index.js';
import OpenAI from 'openai';
import { stringify } from 'yaml';
import type { Condition } from '../../../src/api/gateway/object.ts';
import type { EchoServer } from '../../support/echo-server.ts';
import type { GatewayHarness } from '../../support/gateway.ts';
import type { RequestOptions, TestResponse } from '../../support/client.ts';
import { gatewayClass, gateway, service } from '../../support/manifests.ts';
import type { RecordingServer } from './doubles.ts';

export type Kind = 'svc' | 'ai' | 'mcp';
export const KINDS: readonly Kind[] = ['svc', 'ai', 'mcp'];

/** The kind names status messages use (src/controller/translate/status/not-applied.ts). */
export const STATUS_KIND: Readonly<Record<Kind, string>> = { svc: 'Service', ai: 'ai', mcp: 'mcp' };

/** The route types every matrix ai backend serves, by the SDKs' path suffixes. */
export const AI_ROUTES = { '/chat/completions': 'Completions', '/messages': 'Messages' };

export interface Variant {
  readonly name: string;
  readonly traffic?: Record<string, unknown>;
  readonly backend?: Record<string, unknown>;
  /** Only these kinds (default all three). */
  readonly kinds?: readonly Kind[];
  /** Backend ref per kind, overriding the shared `echo` Service, `llm` and `tools` ProxyBackends. */
  readonly refs?: Partial<Record<Kind, Record<string, unknown>>>;
  /** Extra members of the route rule (e.g. `timeouts`). */
  readonly rule?: Record<string, unknown>;
}

const doc = (object: unknown): string => `---\n${stringify(object)}`;

export const DEFAULT_REFS: Readonly<Record<Kind, Record<string, unknown>>> = {
  svc: { name: 'echo', port: 8080 },
  ai: { group: 'switchboard.dev', kind: 'ProxyBackend', name: 'llm' },
  mcp: { group: 'switchboard.dev', kind: 'ProxyBackend', name: 'tools' },
};

/** An `ai` ProxyBackend on a provider double (providerA speaks OpenAI), with extra `spec.policies`. */
export function aiBackend(name: string, port: number, policies: Record<string, unknown> = {}): string {
  return doc({
    apiVersion: 'switchboard.dev/v1alpha1', kind: 'ProxyBackend', metadata: { name, namespace: 'default' },
    spec: { ai: { provider: { providerA: {}, host: '127.0.0.1', port } }, policies: { ai: { routes: AI_ROUTES }, ...policies } },
  });
}

/** An `mcp` ProxyBackend with one static target `one` (tool names stay unprefixed). */
export function mcpBackend(name: string, port: number): string {
  return doc({
    apiVersion: 'switchboard.dev/v1alpha1', kind: 'ProxyBackend', metadata: { name, namespace: 'default' },
    spec: { mcp: { targets: [{ name: 'one', static: { host: '127.0.0.1', port } }] } },
  });
}

export function secret(name: string, data: Record<string, string>): string {
  return doc({ apiVersion: 'v1', kind: 'Secret', metadata: { name, namespace: 'default' }, stringData: data });
}

export function object(o: unknown): string {
  return doc(o);
}

/** Gateway `gw` (HTTP, port 80), the shared backends, each variant's routes and policies, and `extra` objects. */
export function matrixYaml(up: { echo: EchoServer; provider: RecordingServer; target: RecordingServer }, variants: readonly Variant[], extra = ''): string {
  let out = gatewayClass() + gateway('gw', [{ name: 'http', port: 80 }]) + service('echo', up.echo)
    + aiBackend('llm', up.provider.port) + mcpBackend('tools', up.target.port) + extra;
  for (const v of variants) {
    for (const kind of v.kinds ?? KINDS) {
      const name = `${v.name}-${kind}`;
      out += doc({
        apiVersion: 'gateway.networking.k8s.io/v1', kind: 'HTTPRoute', metadata: { name, namespace: 'default' },
        spec: { parentRefs: [{ name: 'gw' }], rules: [{ matches: [{ path: { type: 'PathPrefix', value: `/${v.name}/${kind}` } }], backendRefs: [v.refs?.[kind] ?? DEFAULT_REFS[kind]], ...v.rule }] },
      });
      if (v.traffic || v.backend) {
        out += doc({
          apiVersion: 'switchboard.dev/v1alpha1', kind: 'ProxyPolicy', metadata: { name, namespace: 'default' },
          spec: { targetRefs: [{ group: 'gateway.networking.k8s.io', kind: 'HTTPRoute', name }], ...(v.traffic ? { traffic: v.traffic } : {}), ...(v.backend ? { backend: v.backend } : {}) },
        });
      }
    }
  }
  return out;
}

/** The real clients, addressed at a variant's route of one kind. */
export class Clients {
  readonly #gw: GatewayHarness;
  readonly #mcp: Client[] = [];
  constructor(gw: GatewayHarness) {
    this.#gw = gw;
  }

  /** A plain HTTP/1.1 request to `/<variant>/svc<path>`. */
  svc(variant: string, opts: RequestOptions = {}): Promise<TestResponse> {
    return this.#gw.request(80, { ...opts, path: `/${variant}/svc${opts.path ?? ''}` });
  }

  openai(variant: string, opts: { apiKey?: string; headers?: Record<string, string>; timeout?: number } = {}): OpenAI {
    return new OpenAI({ baseURL: this.#gw.url(80, `/${variant}/ai/v1`), apiKey: opts.apiKey ?? 'sk-client', maxRetries: 0, defaultHeaders: opts.headers, timeout: opts.timeout ?? 10_000 });
  }

  anthropic(variant: string, opts: { apiKey?: string; headers?: Record<string, string> } = {}): Anthropic {
    return new Anthropic({ baseURL: this.#gw.url(80, `/${variant}/ai`), apiKey: opts.apiKey ?? 'sk-client', maxRetries: 0, defaultHeaders: opts.headers, timeout: 10_000 });
  }

  /** One chat completion with the OpenAI SDK; resolves with the answer and its response headers. */
  async chat(variant: string, opts: { apiKey?: string; headers?: Record<string, string>; model?: string } = {}): Promise<{ text: string | null; headers: Headers }> {
    const { data, response } = await this.openai(variant, opts).chat.completions.create({ model: opts.model ?? 'm', messages: [{ role: 'user', content: 'hi' }] }).withResponse();
    return { text: data.choices[0]?.message.content ?? null, headers: response.headers };
  }

  /** One Messages call with the Anthropic SDK (translated to the provider's Completions). */
  async message(variant: string, opts: { apiKey?: string; headers?: Record<string, string> } = {}): Promise<string> {
    const answer = await this.anthropic(variant, opts).messages.create({ model: 'm', max_tokens: 16, messages: [{ role: 'user', content: 'hi' }] });
    return answer.content.map((b) => (b.type === 'text' ? b.text : '')).join('');
  }

  /**
   * An MCP SDK client connected to `/<variant>/mcp`; `responses` collects the headers of every
   * HTTP answer the transport read (the SDK does not expose them otherwise).
   */
  async mcp(variant: string, headers: Record<string, string> = {}): Promise<{ client: Client; responses: Headers[] }> {
    const responses: Headers[] = [];
    const client = new McpClient({ name: 'matrix', version: '1.0.0' });
    const transport = new StreamableHTTPClientTransport(new URL(this.#gw.url(80, `/${variant}/mcp`)), {
      requestInit: { headers },
      fetch: async (url, init) => {
        const res = await fetch(url, init);
        responses.push(res.headers);
        return res;
      },
    });
    await client.connect(transport);
    this.#mcp.push(client);
    return { client, responses };
  }

  /** Connects and calls `tool`; resolves with the tool's text. */
  async callTool(variant: string, headers: Record<string, string> = {}, tool = 'whoami'): Promise<{ text: string; responses: Headers[] }> {
    const { client, responses } = await this.mcp(variant, headers);
    const result = await client.callTool({ name: tool, arguments: {} });
    const content = result.content as { type: string; text?: string }[];
    return { text: content.map((c) => c.text ?? '').join(''), responses };
  }

  async close(): Promise<void> {
    await Promise.all(this.#mcp.map((c) => c.close().catch(() => undefined)));
  }
}

/** The rejection of `promise`; fails if it resolves. */
export async function failure(promise: Promise<unknown>): Promise<unknown> {
  return promise.then((value) => assert.fail(`expected a refusal, got ${JSON.stringify(value)?.slice(0, 300)}`), (err: unknown) => err);
}

/** An OpenAI SDK error of `status` whose error object has `type` (and `code` when given). */
export function assertOpenAIError(err: unknown, status: number, type: string, code?: string): void {
  assert.ok(err instanceof OpenAI.APIError, `not an OpenAI APIError: ${String(err)}`);
  assert.equal(err.status, status, String(err));
  const body = err.error as { type?: string; code?: string } | undefined;
  assert.equal(body?.type, type, `OpenAI error object: ${JSON.stringify(err.error)}`);
  if (code !== undefined) assert.equal(body?.code, code);
}

/** An Anthropic SDK error of `status` in Anthropic's envelope `{type: "error", error: {type}}`. */
export function assertAnthropicError(err: unknown, status: number, type: string): void {
  assert.ok(err instanceof Anthropic.APIError, `not an Anthropic APIError: ${String(err)}`);
  assert.equal(err.status, status, String(err));
  const body = err.error as { type?: string; error?: { type?: string } } | undefined;
  assert.equal(body?.type, 'error', `Anthropic envelope: ${JSON.stringify(err.error)}`);
  assert.equal(body?.error?.type, type, `Anthropic envelope: ${JSON.stringify(err.error)}`);
}

/**
 * The MCP SDK's refusal of an HTTP answer: the transport's error carries the HTTP status as `code`
 * and the body in its message, which must be a JSON-RPC error with `rpcCode` (and `code` in data).
 */
export function assertJsonRpcRefusal(err: unknown, status: number, rpcCode: number, code?: string): void {
  assert.ok(err instanceof Error, String(err));
  assert.equal((err as Error & { code?: number }).code, status, err.message);
  const body = /(\{"jsonrpc".*\})/.exec(err.message)?.[1];
  assert.ok(body, `no JSON-RPC body in: ${err.message}`);
  const parsed = JSON.parse(body) as { jsonrpc: string; error?: { code?: number; data?: { status?: number; code?: string } } };
  assert.equal(parsed.jsonrpc, '2.0');
  assert.equal(parsed.error?.code, rpcCode, body);
  if (code !== undefined) assert.equal(parsed.error?.data?.code, code, body);
}

/** The gateway's own JSON error body `{error: {code}}`. */
export function assertGatewayError(res: TestResponse, status: number, code: string): void {
  assert.equal(res.status, status, res.text);
  assert.equal((JSON.parse(res.text) as { error?: { code?: string } }).error?.code, code, res.text);
}

/** Runs `action` and asserts the recorder saw no new request meanwhile. */
export async function nothingReaches<T>(recorder: { readonly seen: readonly unknown[] }, action: () => Promise<T>, what = 'the upstream'): Promise<T> {
  const before = recorder.seen.length;
  const result = await action();
  await new Promise((resolve) => setTimeout(resolve, 20));
  assert.equal(recorder.seen.length, before, `${what} saw nothing`);
  return result;
}

/** The `Accepted` condition of the policy `<variant>-<kind>` on its (only) ancestor. */
export function acceptedOf(gw: GatewayHarness, policy: string): Condition {
  const status = gw.statusOf('ProxyPolicy', policy);
  const ancestors = status.ancestors as { conditions?: Condition[] }[] | undefined;
  const accepted = ancestors?.[0]?.conditions?.find((c) => c.type === 'Accepted');
  assert.ok(accepted, `no Accepted condition on ProxyPolicy ${policy}: ${JSON.stringify(status)}`);
  return accepted;
}

/** Whether the policy's status reports `path` (a full field path, e.g. `spec.traffic.retry`) as not applied. */
export function reportsNotApplied(gw: GatewayHarness, policy: string, path: string): boolean {
  const accepted = acceptedOf(gw, policy);
  return accepted.status === 'False' && (accepted.reason === 'PartiallyApplied' || accepted.reason === 'Unsupported') && accepted.message.includes(path);
}

/** Asserts the policy is reported not applied for `path` on `kind`: reason, path and kind named. */
export function assertReported(gw: GatewayHarness, policy: string, path: string, kind: Kind, reasons: readonly string[] = ['PartiallyApplied', 'Unsupported']): void {
  const accepted = acceptedOf(gw, policy);
  assert.equal(accepted.status, 'False', JSON.stringify(accepted));
  assert.ok(reasons.includes(accepted.reason), `reason ${accepted.reason}, expected one of ${reasons.join(', ')}: ${accepted.message}`);
  assert.ok(accepted.message.includes(path), `the message names ${path}: ${accepted.message}`);
  // Kind-limited rows name the kinds right after the path ("… (on ai, mcp backends)"); rows for every kind name none.
  const named = /^[^ ]* \(on ([^)]*) backends\)/.exec(accepted.message.slice(accepted.message.indexOf(path)))?.[1];
  if (named !== undefined) assert.ok(named.split(', ').includes(STATUS_KIND[kind]), `the message names kind ${STATUS_KIND[kind]}: ${accepted.message}`);
}

/** Asserts the policy is accepted with nothing reported (the member applies here). */
export function assertAccepted(gw: GatewayHarness, policy: string): void {
  const accepted = acceptedOf(gw, policy);
  assert.equal(accepted.status, 'True', `ProxyPolicy ${policy}: ${JSON.stringify(accepted)}`);
}

/**
 * The row's contract: when the status reports `path` as not applied on this kind, the condition
 * is asserted; otherwise `effect` must hold (the member applies and is accepted). A member neither
 * applied nor reported fails `effect`.
 */
export async function appliedOrReported(t: TestContext, gw: GatewayHarness, policy: string, path: string, kind: Kind, effect: () => Promise<void>): Promise<void> {
  if (reportsNotApplied(gw, policy, path)) {
    assertReported(gw, policy, path, kind);
    t.diagnostic(`${path} is reported not applied on ${kind}: ${acceptedOf(gw, policy).message}`);
    return;
  }
  await effect();
}

export interface Row {
  readonly member: string;
  readonly kind: Kind;
  /** A known defect: the row runs and is reported, but does not fail the suite (name it precisely). */
  readonly todo?: string;
  run(t: TestContext): Promise<void>;
}

/** One `it` per row, named `<member> × <kind>`. */
export function runRows(rows: readonly Row[]): void {
  for (const row of rows) {
    it(`${row.member} × ${row.kind}`, row.todo ? { todo: row.todo } : {}, (t) => row.run(t));
  }
}

/** Three rows for one member, one per kind. */
export function perKind(member: string, runs: Partial<Record<Kind, (t: TestContext) => Promise<void>>>, todo: Partial<Record<Kind, string>> = {}): Row[] {
  return KINDS.filter((k) => runs[k]).map((kind) => ({ member, kind, ...(todo[kind] ? { todo: todo[kind] } : {}), run: runs[kind] as (t: TestContext) => Promise<void> }));
}

/** A header value as a single string (the first when repeated). */
export function header(headers: Readonly<Record<string, string | string[] | undefined>>, name: string): string | undefined {
  const v = headers[name];
  return Array.isArray(v) ? v[0] : v;
}

/** The last request a recorder saw (fails when there is none). */
export function last<T>(recorder: { readonly seen: readonly T[] }): T {
  const found = recorder.seen.at(-1);
  assert.ok(found !== undefined, 'the upstream saw a request');
  return found;
}
