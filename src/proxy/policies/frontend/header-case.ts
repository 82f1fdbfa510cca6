/**
 * Frontend `http.http1HeaderCase: Preserve` (HTTP/1 only). Node and undici hand the pipeline
 * lower-cased header names; with Preserve the Exchange puts the original spelling back at the
 * edges: request header names sent upstream take the client's spelling (`req.rawHeaders`), and
 * response header names sent to the client take the upstream's (the dispatch controller's raw
 * headers). Both node's ServerResponse and undici write header names as given. Headers the
 * gateway adds keep its own (lower-case) spelling. The setting is taken per connection, when it
 * is accepted.
 */
import type { Socket } from 'node:net';
import type { HeaderMap } from '../../http/headers.ts';
import type { CompiledFrontend } from './compile.ts';

const preserving = new WeakSet<Socket>();

/** Called for every HTTP/1 connection with the bind's frontend at accept time. */
export function watchHeaderCase(socket: Socket, frontend: CompiledFrontend | undefined): void {
  if (frontend?.http.http1PreserveHeaderCase === true) preserving.add(socket);
}

/** Whether the request arrived over HTTP/1 on a connection that preserves header case. */
export function preservesHeaderCase(req: { readonly httpVersionMajor: number; readonly socket: unknown }): boolean {
  return req.httpVersionMajor === 1 && preserving.has(req.socket as Socket);
}

type RawHeaders = readonly (string | Buffer)[] | Readonly<Record<string, unknown>> | null | undefined;

/**
 * `headers` (lower-case names) with each name spelled as it first appears in `raw` (a flat
 * name/value list, as node's `rawHeaders` or undici's raw headers); names not in `raw` stay.
 */
export function withRawCase(headers: HeaderMap, raw: RawHeaders): HeaderMap {
  if (!Array.isArray(raw) || raw.length === 0) return headers;
  const spelling = new Map<string, string>();
  for (let i = 0; i < raw.length; i += 2) {
    const name = String(raw[i]);
    const lower = name.toLowerCase();
    if (lower !== name && !spelling.has(lower)) spelling.set(lower, name);
  }
  if (spelling.size === 0) return headers;
  const out: HeaderMap = {};
  for (const name in headers) out[spelling.get(name) ?? name] = headers[name];
  return out;
}
