/**
 * Traffic policies for Upgrade (WebSocket) requests: the same compiled chain as any request, so
 * authentication, authorization and limits hold for WebSockets too. A policy's answer is written
 * to the raw socket; on continue the upgrade proceeds with the headers the policies produced.
 * Response mutations and filters cannot apply to a piped upgrade and are not run.
 */
import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import type { Logger } from '../../common/logger.ts';
import { toErrorResponse } from '../errors.ts';
import { runTrafficPolicy } from '../policies/chain.ts';
import { BodyTooLargeError } from '../policies/context.ts';
import { RequestPolicyContext } from '../policies/request-context.ts';
import type { DirectResponse, PolicyResult } from '../policies/result.ts';
import type { Forward } from './exchange.ts';

/** Runs the chain; calls `proceed` to go on with the upgrade, or answers and reports the status. */
export function applyUpgradePolicies(
  req: IncomingMessage,
  client: Duplex,
  fwd: Forward,
  scheme: 'http' | 'https',
  logger: Logger,
  proceed: (policy: RequestPolicyContext) => void,
  done: (status: number) => void,
): void {
  const policy = new RequestPolicyContext(req, fwd, scheme);
  const settle = (result: PolicyResult) => {
    // Nothing of the policy context applies to a piped upgrade after this point.
    policy.end();
    // The client may have gone while an asynchronous policy (ext_authz …) was deciding.
    if (client.destroyed) return done(499);
    if (result.action === 'continue') return proceed(policy);
    const headers: Record<string, string | string[]> = {};
    for (const [name, value] of Object.entries(result.response.headers ?? {})) headers[name.toLowerCase()] = typeof value === 'string' ? value : [...value];
    for (const mutate of policy.responseMutations) mutate(headers, result.response.status);
    done(writeAnswer(client, { ...result.response, headers }));
  };
  const fail = (err: unknown) => {
    policy.end();
    const error = err instanceof BodyTooLargeError ? { code: 'PAYLOAD_TOO_LARGE' as const, limit: err.limit } : { code: 'INTERNAL' as const, cause: String(err) };
    if (!(err instanceof BodyTooLargeError)) logger.error({ err }, 'traffic policy failed on an upgrade request');
    const { status, body } = toErrorResponse(error);
    done(writeAnswer(client, { status, body, headers: { 'content-type': 'application/json' } }));
  };
  try {
    const result = runTrafficPolicy(fwd.traffic!, policy);
    if (result instanceof Promise) result.then(settle, fail);
    else settle(result);
  } catch (err) {
    fail(err);
  }
}

function writeAnswer(client: Duplex, response: DirectResponse): number {
  const body = response.body === undefined ? Buffer.alloc(0) : Buffer.from(response.body);
  let head = `HTTP/1.1 ${response.status} ${response.status < 400 ? 'OK' : 'Refused'}\r\n`;
  for (const [name, value] of Object.entries(response.headers ?? {})) {
    if (name === 'content-length' || name === 'connection') continue;
    for (const v of typeof value === 'string' ? [value] : value) head += `${name}: ${v}\r\n`;
  }
  head += `content-length: ${body.length}\r\nconnection: close\r\n\r\n`;
  if (client.writable) client.end(Buffer.concat([Buffer.from(head, 'latin1'), body]));
  return response.status;
}
