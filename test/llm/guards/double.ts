/**
 * The base of the guard-service doubles: a local HTTP server that records each call, checks it
 * against the vendor's documented request shape (each double's `check`), and answers as the
 * vendor does. A call that breaks the shape is answered as the vendor answers a bad request and
 * is listed in `problems`, so a test that sends the wrong thing fails twice over: the guard gets
 * no usable answer, and `assertClean()` names what was wrong.
 */
import assert from 'node:assert/strict';
import { createServer, type IncomingHttpHeaders, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createServer as createTlsServer } from 'node:https';
import type { AddressInfo } from 'node:net';

export interface GuardCall {
  readonly method: string;
  readonly path: string;
  readonly headers: IncomingHttpHeaders;
  readonly body: Buffer;
  /** The body parsed as JSON (undefined when it is not JSON). */
  readonly json: unknown;
}

export interface DoubleAnswer {
  readonly status: number;
  readonly body: unknown;
  /** Delay before answering (timeouts). */
  readonly delayMs?: number;
}

/** What a double does with one call: its shape problems (empty when well-formed) and its answer. */
export type DoubleHandler = (call: GuardCall) => { readonly problems: readonly string[]; readonly answer: DoubleAnswer };

export interface GuardDouble {
  /** `http://127.0.0.1:<port>`: the guard's vendor origin in tests. */
  readonly origin: string;
  readonly host: string;
  readonly port: number;
  readonly calls: GuardCall[];
  readonly problems: string[];
  /** Replaces the answer for the next calls (an outage, a slow service, a malformed answer). */
  override(answer: ((call: GuardCall) => DoubleAnswer) | undefined): void;
  /** Fails the test when any call broke the vendor's request shape. */
  assertClean(): void;
  close(): Promise<void>;
}

/** `tls`: serve HTTPS with this certificate (a guard's `policies.tls` is then what lets it connect). */
export async function startGuardDouble(name: string, handle: DoubleHandler, badRequest: (problems: readonly string[]) => DoubleAnswer, tls?: { readonly certPem: string; readonly keyPem: string }): Promise<GuardDouble> {
  const calls: GuardCall[] = [];
  const problems: string[] = [];
  let override: ((call: GuardCall) => DoubleAnswer) | undefined;
  const serve = (req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      let json: unknown;
      try {
        json = JSON.parse(body.toString('utf8'));
      } catch {
        json = undefined;
      }
      const call: GuardCall = { method: req.method ?? '', path: req.url ?? '', headers: req.headers, body, json };
      calls.push(call);
      const judged = handle(call);
      problems.push(...judged.problems.map((p) => `${name} ${call.method} ${call.path}: ${p}`));
      const answer = judged.problems.length > 0 ? badRequest(judged.problems) : override ? override(call) : judged.answer;
      const send = () => {
        if (res.destroyed) return;
        res.writeHead(answer.status, { 'content-type': 'application/json' });
        res.end(typeof answer.body === 'string' ? answer.body : JSON.stringify(answer.body));
      };
      if (answer.delayMs) setTimeout(send, answer.delayMs).unref();
      else send();
    });
  };
  const server: Server = tls ? createTlsServer({ cert: tls.certPem, key: tls.keyPem }, serve) : createServer(serve);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    origin: `${tls ? 'https' : 'http'}://127.0.0.1:${port}`,
    host: '127.0.0.1',
    port,
    calls,
    problems,
    override: (answer) => { override = answer; },
    assertClean: () => assert.deepEqual(problems, [], `${name} received requests that break its API`),
    close: () => new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    }),
  };
}

/** Shape checks shared by the doubles. */
export const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
export function header(call: GuardCall, name: string): string | undefined {
  const v = call.headers[name];
  return Array.isArray(v) ? v.join(', ') : v;
}
