import { PassThrough, type Readable } from 'node:stream';
import type { Dispatcher } from 'undici';
import type { Logger } from '../../common/logger.ts';
import type { CompiledMirror } from '../filters/compile.ts';
import type { HeaderMap } from '../http/headers.ts';

/** A mirror that falls this far behind is dropped rather than slowing the main request. */
const MIRROR_MAX_BUFFERED_BYTES = 1 << 20;
/** Mirrors are fire-and-forget; bound how long a slow mirror can hold a connection. */
const MIRROR_TIMEOUT_MS = 30_000;

export interface MirrorRequest {
  readonly method: string;
  readonly path: string;
  readonly headers: HeaderMap;
  /** The client's body, or null. */
  readonly body: Readable | null;
}

/**
 * Fire a copy of the request at each sampled mirror and return the body the main request should
 * send. With a body, it is teed: the main copy keeps backpressure, each mirror copy is dropped
 * when it falls too far behind. Mirror responses are discarded; mirror failures are logged at
 * debug and never reach the client.
 */
export function startMirrors(mirrors: readonly CompiledMirror[], req: MirrorRequest, logger: Logger): Readable | null {
  const sampled = mirrors.filter((m) => m.percent >= 100 || Math.random() * 100 < m.percent);
  if (sampled.length === 0) return req.body;
  const targets = sampled.flatMap((m) => {
    const target = m.backend.endpoints.next();
    return target ? [{ backend: m.backend, target }] : [];
  });
  if (targets.length === 0) return req.body;

  let mainBody = req.body;
  const copies: PassThrough[] = [];
  if (req.body) {
    const source = req.body;
    mainBody = source.pipe(new PassThrough());
    for (let i = 0; i < targets.length; i++) copies.push(new PassThrough());
    source.on('data', (chunk: Buffer) => {
      for (const copy of copies) {
        if (copy.destroyed) continue;
        if (copy.writableLength > MIRROR_MAX_BUFFERED_BYTES) copy.destroy();
        else copy.write(chunk);
      }
    });
    source.once('end', () => copies.forEach((c) => c.end()));
    source.once('error', () => copies.forEach((c) => c.destroy()));
  }

  targets.forEach(({ backend, target }, i) => {
    const headers = { ...req.headers };
    if (backend.rewriteHost) headers.host = target.authority;
    const body = copies[i] ?? null;
    target.dispatcher.dispatch(
      { method: req.method as Dispatcher.HttpMethod, path: req.path, headers, body, headersTimeout: MIRROR_TIMEOUT_MS, bodyTimeout: MIRROR_TIMEOUT_MS },
      discardResponse(backend.key, logger, body),
    );
  });
  return mainBody;
}

function discardResponse(backend: string, logger: Logger, body: PassThrough | null): Dispatcher.DispatchHandler {
  // undici checks that every callback exists; the response is drained and dropped.
  return {
    onRequestStart() {},
    onResponseStart() {},
    onResponseData() {},
    onResponseEnd() {},
    onResponseError(_controller, err) {
      body?.destroy();
      logger.debug({ backend, err: err.message }, 'mirror request failed');
    },
  };
}
