/**
 * HTTP/1.1 response heads on a raw socket, for Upgrade requests: the upstream's answer (101 or a
 * refusal) is read as a head, the response effects of the request (HTTPRoute response header
 * filters, policy response mutations such as CORS and `headerModifiers.response`) are applied to
 * it, and it is written on to the client. The ordinary path gets the same effects in the
 * Exchange; node validates what it writes there, so the same checks run here before writing.
 */
import { validateHeaderName, validateHeaderValue } from 'node:http';
import type { Duplex } from 'node:stream';
import { applyHeaderModifier } from '../http/header-modifier.ts';
import type { CompiledFilters } from '../filters/compile.ts';
import type { HeaderMap } from '../http/headers.ts';
import type { ResponseMutation } from '../policies/context.ts';

/** An upstream answer head longer than this is refused (502): the same bound as a tunnel proxy's answer. */
export const MAX_RESPONSE_HEAD_BYTES = 16 * 1024;

const HEAD_END = Buffer.from('\r\n\r\n');

export interface ResponseHead {
  readonly status: number;
  readonly reason: string;
  /** Lowercased names; a repeated field is an array in arrival order. */
  readonly headers: HeaderMap;
}

/** The response effects a head gets, in the order the ordinary path applies them (Exchange). */
export interface HeadEffects {
  readonly filters: CompiledFilters;
  readonly mutations: readonly ResponseMutation[] | undefined;
}

export function hasHeadEffects(effects: HeadEffects): boolean {
  return effects.filters.responseHeaders.length > 0 || (effects.mutations !== undefined && effects.mutations.length > 0);
}

/** Where the head ends (index after the blank line), or -1 when more bytes are needed. */
export function headEnd(buffer: Buffer): number {
  const at = buffer.indexOf(HEAD_END);
  return at < 0 ? -1 : at + HEAD_END.length;
}

/** Parses `HTTP/1.x SSS reason` and its fields; undefined for anything malformed (obs-fold included). */
export function parseResponseHead(head: Buffer): ResponseHead | undefined {
  const lines = head.toString('latin1').split('\r\n');
  const statusLine = /^HTTP\/1\.[01] (\d{3})(?: ([^\r\n]*))?$/.exec(lines[0] ?? '');
  if (!statusLine) return undefined;
  const headers: HeaderMap = {};
  for (let i = 1; i < lines.length; i++) {
    const line = lines[i];
    if (line === '') continue;
    const colon = line.indexOf(':');
    if (colon <= 0 || line[0] === ' ' || line[0] === '\t') return undefined;
    const name = line.slice(0, colon).trim().toLowerCase();
    const value = line.slice(colon + 1).trim();
    const known = headers[name];
    headers[name] = known === undefined ? value : Array.isArray(known) ? [...known, value] : [known, value];
  }
  return { status: Number(statusLine[1]), reason: statusLine[2] ?? '', headers };
}

/** Applies the route's response header filters, then the policies' response mutations. */
export function applyHeadEffects(head: ResponseHead, effects: HeadEffects): ResponseHead {
  const headers = head.headers;
  for (const m of effects.filters.responseHeaders) applyHeaderModifier(headers, m, 'response');
  for (const mutate of effects.mutations ?? []) mutate(headers, head.status);
  return head;
}

/** Serialises a head; throws (node's own error) on a name or value node would refuse to send. */
export function serializeResponseHead(head: ResponseHead): Buffer {
  let text = `HTTP/1.1 ${head.status} ${head.reason}\r\n`;
  for (const name in head.headers) {
    const value = head.headers[name];
    validateHeaderName(name);
    for (const v of Array.isArray(value) ? value : [value]) {
      validateHeaderValue(name, v);
      text += `${name}: ${v}\r\n`;
    }
  }
  return Buffer.from(`${text}\r\n`, 'latin1');
}

/**
 * For an in-process backend that writes its answer on the raw socket itself (the LLM Realtime
 * relay, its refusals and ws's 101): the first response head written on `socket` passes through
 * `applyHeadEffects` before it reaches the client, the rest goes through unchanged. A head that
 * does not parse, or one the effects make unsendable, goes out as the handler wrote it.
 */
export function applyEffectsToFirstHead(socket: Duplex, effects: HeadEffects): void {
  type Callback = (err?: Error | null) => void;
  const write = socket.write;
  const end = socket.end;
  const writeRaw = write.bind(socket) as (chunk: Buffer, cb?: Callback) => boolean;
  const endRaw = end.bind(socket) as (chunk?: Buffer, cb?: () => void) => Duplex;
  let pending: Buffer = Buffer.alloc(0);
  const restore = () => {
    socket.write = write;
    socket.end = end;
  };
  const rewrite = (bytes: Buffer): Buffer => {
    const at = headEnd(bytes);
    const parsed = parseResponseHead(bytes.subarray(0, at));
    if (!parsed) return bytes;
    try {
      return Buffer.concat([serializeResponseHead(applyHeadEffects(parsed, effects)), bytes.subarray(at)]);
    } catch {
      return bytes;
    }
  };
  const toBuffer = (chunk: unknown, encoding: unknown): Buffer => Buffer.isBuffer(chunk) ? chunk : typeof chunk === 'string' ? Buffer.from(chunk, typeof encoding === 'string' ? encoding as BufferEncoding : 'utf8') : Buffer.from(chunk as Uint8Array);
  socket.write = function interceptWrite(chunk: unknown, encoding?: unknown, cb?: unknown): boolean {
    const callback = (typeof encoding === 'function' ? encoding : cb) as Callback | undefined;
    pending = Buffer.concat([pending, toBuffer(chunk, encoding)]);
    if (headEnd(pending) < 0 && pending.length <= MAX_RESPONSE_HEAD_BYTES) {
      // Held until the head is complete; the caller's callback runs as if written.
      if (callback) process.nextTick(callback);
      return true;
    }
    restore();
    const out = headEnd(pending) < 0 ? pending : rewrite(pending);
    return writeRaw(out, callback);
  } as Duplex['write'];
  socket.end = function interceptEnd(chunk?: unknown, encoding?: unknown, cb?: unknown): Duplex {
    if (typeof chunk === 'function') return restoreAndEnd(chunk as () => void);
    if (chunk !== undefined && chunk !== null) {
      const callback = (typeof encoding === 'function' ? encoding : cb) as (() => void) | undefined;
      pending = Buffer.concat([pending, toBuffer(chunk, encoding)]);
      restore();
      endRaw(headEnd(pending) < 0 ? pending : rewrite(pending), callback);
      return socket;
    }
    return restoreAndEnd(cb as (() => void) | undefined);
  } as Duplex['end'];
  const restoreAndEnd = (callback: (() => void) | undefined): Duplex => {
    restore();
    if (pending.length > 0) writeRaw(pending);
    endRaw(undefined, callback);
    return socket;
  };
}
