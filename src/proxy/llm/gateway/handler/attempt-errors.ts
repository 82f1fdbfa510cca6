/** How a failed provider attempt is classified: for provider health, failover and the client's error code. */
import { ClientGoneError } from '../upstream.ts';
import { ResponseTooLargeError } from '../bounded-body.ts';
import { ProviderStalledError } from '../provider-health.ts';
import type { GatewayState, Tracked } from './state.ts';

/**
 * An attempt that got no answer: the provider's failure (502/504 as the client would see it),
 * unless the client left, the answer was too large or the wait was ended by another attempt's
 * stall eviction (none says anything new about the provider).
 */
export function attemptFailed(gw: GatewayState, tracked: Tracked, err: unknown, clientGone: boolean): void {
  gw.health.headDone(tracked.index, tracked);
  if (clientGone || err instanceof ClientGoneError || err instanceof ResponseTooLargeError || err instanceof ProviderStalledError) gw.health.abandon(tracked.index, tracked.started);
  else gw.health.failed(tracked.index, tracked.started, isTimeout(err) ? 504 : 502, tracked.spec);
}

/** The connection itself failed (nothing reached the provider): safe to send the request elsewhere. */
export function isConnectFailure(err: unknown): boolean {
  const code = (err as { code?: unknown } | undefined)?.code;
  // ERR_PROVIDER_ADDRESS_REFUSED: the SSRF guard refused the address before connecting (guarded-connect.ts).
  return code === 'ECONNREFUSED' || code === 'EHOSTUNREACH' || code === 'ENETUNREACH' || code === 'UND_ERR_CONNECT_TIMEOUT' || code === 'ERR_PROVIDER_ADDRESS_REFUSED';
}

export function isTimeout(err: unknown): boolean {
  const code = (err as { code?: unknown } | undefined)?.code;
  // A wait ended by the provider's stall eviction is answered as the timeout it would have become.
  return code === 'UND_ERR_HEADERS_TIMEOUT' || code === 'UND_ERR_BODY_TIMEOUT' || code === 'UND_ERR_CONNECT_TIMEOUT' || err instanceof ProviderStalledError;
}
