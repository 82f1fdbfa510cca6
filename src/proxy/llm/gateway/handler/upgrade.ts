/**
 * WebSocket upgrades on an AI backend: only the Realtime route takes one (realtime.ts); the
 * backend-policy layer runs for every provider the relay may try before anything is relayed.
 */
import { STATUS_CODES } from 'node:http';
import type { Duplex } from 'node:stream';
import type { HandlerRequest } from '../../../backends/handlers.ts';
import { renderGatewayError } from '../../../http/error-format.ts';
import type { CompiledBackendPolicy } from '../../../policies/backend/compile.ts';
import { renderError } from '../../translate/errors.ts';
import { gateProviderCall, type PolicyGate } from '../backend-policy.ts';
import type { RealtimeAttempt } from '../realtime.ts';

/** Refuses an upgrade on a route other than Realtime: a 400 in OpenAI's error format. */
export function refuseNonRealtimeUpgrade(socket: Duplex, request: HandlerRequest): void {
  const r = renderError({ status: 400, message: 'only the Realtime route accepts WebSocket upgrades on this backend' }, 'openai');
  socket.end(`HTTP/1.1 400 Bad Request\r\ncontent-type: application/json\r\ncontent-length: ${r.body.length}\r\nconnection: close\r\n\r\n${Buffer.from(r.body).toString('utf8')}`);
  request.done(400, r.body.length);
}

/**
 * The backend-policy layer before a Realtime relay: every provider it may try must pass (an
 * invalid policy or an extAuth refusal on any of them refuses the upgrade, nothing sent). Each
 * attempt gets the header changes its request steps made, for the relayed handshake. Resolves
 * undefined when refused (the answer written).
 */
export async function gateUpgrade(socket: Duplex, request: HandlerRequest, attempts: readonly RealtimeAttempt[]): Promise<RealtimeAttempt[] | undefined> {
  const ran = new Map<CompiledBackendPolicy, PolicyGate>();
  const gated: RealtimeAttempt[] = [];
  for (const attempt of attempts) {
    const gating = gateProviderCall(request.backendRuntime?.subBackend(attempt.provider.name), attempt.policy, request.policy, ran);
    const gate = gating instanceof Promise ? await gating : gating;
    if (gate.kind === 'passed') {
      gated.push({ ...attempt, stepHeaders: gate.headers });
      continue;
    }
    const response = gate.response;
    const body = response.error ? renderGatewayError(response.status, response.error, 'openai') : String(response.body ?? '');
    const length = Buffer.byteLength(body);
    socket.end(`HTTP/1.1 ${response.status} ${STATUS_CODES[response.status] ?? ''}\r\ncontent-type: application/json\r\ncontent-length: ${length}\r\nconnection: close\r\n\r\n${body}`);
    request.done(response.status, length);
    return undefined;
  }
  return gated;
}
