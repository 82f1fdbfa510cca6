/**
 * A local Bedrock AgentCore data plane (cloud-A agent runtime) in the service's wire shape, for
 * the agent-runtime backend's tests: `POST /runtimes/<URL-encoded ARN or id>/invocations
 * [?qualifier=…]`, restJson1 errors (`x-amzn-ErrorType` and `{"message": …}`), the runtime session
 * id echoed in `X-Amzn-Bedrock-AgentCore-Runtime-Session-Id`, and the agent's answer as the
 * AgentCore SDK's containers give it: `application/json`, or `text/event-stream` with `data:`
 * events. Every request's SigV4 signature is recomputed independently of the gateway's signer
 * (test/llm/fake-sts.ts, node:crypto) for service `bedrock-agentcore` in the runtime's region;
 * a runtime set up with an inbound JWT authorizer takes `Authorization: Bearer <token>` instead.
 */
import { randomUUID } from 'node:crypto';
import { createServer, type IncomingHttpHeaders, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createServer as createTlsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { verifySigV4, type SigV4Verdict } from '../llm/fake-sts.ts';

export const SESSION_HEADER = 'x-amzn-bedrock-agentcore-runtime-session-id';

export interface FakeRuntime {
  /** The ARN (or bare id) the path must name, once decoded. */
  readonly id: string;
  readonly region: string;
  /** Endpoint names the qualifier may be (DEFAULT always exists). */
  readonly endpoints?: readonly string[];
  /** An inbound JWT authorizer: this bearer token instead of SigV4. */
  readonly bearer?: string;
}

export interface Invocation {
  readonly method: string;
  /** Path and query as sent. */
  readonly path: string;
  /** The runtime the path named, decoded. */
  readonly runtime: string;
  readonly qualifier: string | null;
  readonly headers: IncomingHttpHeaders;
  readonly body: Buffer;
  readonly verdict: SigV4Verdict | { readonly ok: true; readonly bearer: string };
}

export interface FakeAgentCore {
  readonly url: string;
  readonly invocations: Invocation[];
  /** Holds a streamed answer after its first event until released (proves the gateway streams). */
  hold(): () => void;
  /** Delays every answer's head by this many ms (timeouts). */
  delayMs: number;
  /** Answers whose connection closed before the answer was complete (the gateway gave up on them). */
  cutShort: number;
  stop(): Promise<void>;
}

/**
 * `keys`: access key id → secret key the service accepts; `sessionSecret` also accepts temporary
 * keys (an STS fake's issued sessions), whose session token must then come with them.
 */
export async function startFakeAgentCore(
  runtimes: readonly FakeRuntime[],
  keys: Readonly<Record<string, string>>,
  sessionSecret?: (accessKeyId: string) => { secret: string; token: string } | undefined,
  /** Serve HTTPS with this certificate (as the real regional endpoint does). */
  tls?: { readonly certPem: string; readonly keyPem: string },
): Promise<FakeAgentCore> {
  const invocations: Invocation[] = [];
  let held: Promise<void> | undefined;
  const state: FakeAgentCore = {
    url: '', invocations, delayMs: 0, cutShort: 0,
    hold() {
      let release!: () => void;
      held = new Promise((resolve) => (release = resolve));
      return () => {
        held = undefined;
        release();
      };
    },
    stop: async () => undefined,
  };
  const serve = (req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      const path = req.url ?? '/';
      const url = new URL(path, 'http://agentcore');
      const match = /^\/runtimes\/([^/]+)\/invocations$/.exec(url.pathname);
      if (!match || req.method !== 'POST') return error(res, 404, 'UnknownOperationException', 'Unknown operation');
      const runtimeName = decodeURIComponent(match[1]);
      const runtime = runtimes.find((r) => r.id === runtimeName);
      const qualifier = url.searchParams.get('qualifier');
      let verdict: Invocation['verdict'];
      const authorization = req.headers.authorization ?? '';
      if (runtime?.bearer !== undefined && authorization.startsWith('Bearer ')) {
        verdict = authorization === `Bearer ${runtime.bearer}` ? { ok: true, bearer: authorization.slice(7) } : { ok: false, reason: 'invalid bearer token' };
      } else {
        const region = runtime?.region ?? /^arn:[^:]+:[^:]+:([^:]+):/.exec(runtimeName)?.[1] ?? 'us-east-1';
        verdict = verifySigV4({ method: req.method, path, headers: req.headers, body }, { service: 'bedrock-agentcore', region }, (id) => keys[id] ?? sessionSecret?.(id)?.secret);
        const session = verdict.ok ? sessionSecret?.(verdict.accessKeyId) : undefined;
        if (session && verdict.ok && verdict.sessionToken !== session.token) verdict = { ok: false, reason: 'x-amz-security-token is not the session token of the key' };
      }
      invocations.push({ method: req.method, path, runtime: runtimeName, qualifier, headers: req.headers, body, verdict });
      if (!verdict.ok) {
        return error(res, 403, 'InvalidSignatureException', `The request signature we calculated does not match the signature you provided. (${verdict.reason})`);
      }
      if (!runtime) return error(res, 404, 'ResourceNotFoundException', `Runtime ${runtimeName} not found`);
      if (qualifier !== null && qualifier !== 'DEFAULT' && !(runtime.endpoints ?? []).includes(qualifier)) return error(res, 404, 'ResourceNotFoundException', `Endpoint ${qualifier} not found`);
      const session = req.headers[SESSION_HEADER];
      if (typeof session !== 'string' || session.length < 33 || session.length > 256) {
        return error(res, 400, 'ValidationException', '1 validation error detected: Value at \'runtimeSessionId\' failed to satisfy constraint: Member must have length greater than or equal to 33');
      }
      res.on('close', () => {
        if (!res.writableFinished) state.cutShort++;
      });
      setTimeout(() => answer(res, session, body, () => held), state.delayMs);
    });
  };
  const server: Server = tls ? createTlsServer({ cert: tls.certPem, key: tls.keyPem }, serve) : createServer(serve);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  Object.assign(state, {
    url: `${tls ? 'https' : 'http'}://127.0.0.1:${port}`,
    stop: () => new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    }),
  });
  return state;
}

/**
 * The agent's answer: `{"prompt": …, "stream": true}` streams three SSE events (the SDK's
 * `data: <json>\n\n` for a generator entrypoint), anything else is one JSON document.
 */
function answer(res: ServerResponse, session: string, body: Buffer, held: () => Promise<void> | undefined): void {
  let payload: { prompt?: unknown; stream?: unknown } = {};
  try {
    payload = JSON.parse(body.toString('utf8')) as typeof payload;
  } catch {
    // A binary payload: answered as JSON all the same.
  }
  const common = { [SESSION_HEADER]: session, 'x-amzn-requestid': randomUUID() };
  if (payload.stream !== true) {
    const doc = JSON.stringify({ result: { role: 'assistant', content: [{ text: `echo: ${String(payload.prompt)}` }] } });
    res.writeHead(200, { ...common, 'content-type': 'application/json', 'content-length': Buffer.byteLength(doc) }).end(doc);
    return;
  }
  res.writeHead(200, { ...common, 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache' });
  const events = ['{"event": {"contentBlockDelta": {"delta": {"text": "echo"}}}}', `{"event": {"contentBlockDelta": {"delta": {"text": ": ${String(payload.prompt)}"}}}}`, '{"event": {"messageStop": {"stopReason": "end_turn"}}}'];
  res.write(`data: ${events[0]}\n\n`);
  const rest = () => {
    for (const e of events.slice(1)) res.write(`data: ${e}\n\n`);
    res.end();
  };
  const waiting = held();
  if (waiting) void waiting.then(rest);
  else setTimeout(rest, 10);
}

function error(res: ServerResponse, status: number, type: string, message: string): void {
  const body = JSON.stringify({ message });
  res.writeHead(status, { 'content-type': 'application/json', 'x-amzn-errortype': `${type}:http://internal.amazon.com/coral/com.amazon.bedrock.agentcore/`, 'x-amzn-requestid': randomUUID(), 'content-length': Buffer.byteLength(body) }).end(body);
}
