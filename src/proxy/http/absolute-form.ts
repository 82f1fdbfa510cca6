/**
 * The scheme of an absolute-form request target (`GET https://host/path`), which admission
 * (pipeline/admit.ts) reduces to origin-form: a forward proxy needs to know the client asked for
 * `https://` to reach the destination over TLS. Only such requests are remembered (no cost on others).
 */
import type { DownstreamRequest } from './downstream.ts';

const HTTPS_TARGETS = new WeakSet<DownstreamRequest>();

export function rememberHttpsTarget(req: DownstreamRequest): void {
  HTTPS_TARGETS.add(req);
}

/** Did the client send an absolute-form `https://` target? */
export function askedForHttps(req: DownstreamRequest): boolean {
  return HTTPS_TARGETS.has(req);
}
