/**
 * Server-sent events (WHATWG HTML §9.2 "event stream interpretation"), parsed once for every
 * consumer in the gateway (LLM provider streams, MCP upstream streams).
 *
 * Linear in the input whatever the chunking: each chunk is scanned once from its start, a line
 * split across chunks is kept as a list of parts (joined once, when its terminator arrives), and
 * line terminators CR, LF and CRLF are recognised anywhere — including a CR ending one chunk and
 * its LF starting the next. Chunks may also split a UTF-8 sequence.
 *
 * Bounded: an event (its data lines, event name) plus the line being read may hold at most
 * `maxEventChars` characters; past it `push` throws {@link SSEEventTooLargeError} and the parser
 * ignores everything after. Whether a stream passes does not depend on its chunking. Without the bound a peer that never ends an event makes the gateway
 * hold the whole stream in memory.
 *
 * Two leniencies differ from the browser algorithm, on purpose: `end()` dispatches a final event
 * not followed by a blank line (providers that close right after their last `data:` line), and
 * `id`/`retry` are ignored (the gateway never reconnects an upstream stream).
 */
export interface SSEEvent {
  readonly event?: string;
  readonly data: string;
}

/** Default for {@link SSEParserOptions.maxEventChars}: 8 MiB of decoded text per event. */
export const DEFAULT_MAX_SSE_EVENT_CHARS = 8 * 1024 * 1024;

export interface SSEParserOptions {
  /** Largest event, in decoded characters (≤ its size in UTF-8 bytes). Default 8 MiB. */
  readonly maxEventChars?: number;
}

/** An event grew past the parser's limit. The stream cannot be trusted after it: stop reading. */
export class SSEEventTooLargeError extends Error {
  readonly limit: number;
  /** Events completed earlier in the same chunk: a caller delivers them before failing. */
  events: readonly SSEEvent[] = [];

  constructor(limit: number) {
    super(`stream event larger than ${limit} characters`);
    this.name = 'SSEEventTooLargeError';
    this.limit = limit;
  }
}

const LF = 10;
const COLON = 58;
const SPACE = 32;
const COALESCE_PARTS = 64;

export class SSEParser {
  private readonly decoder = new TextDecoder('utf-8');
  private readonly maxEventChars: number;
  /** Parts of the line not yet terminated, and their total length. */
  private partial: string[] = [];
  private partialChars = 0;
  /** Parts before this index are already coalesced (see COALESCE_PARTS). */
  private coalesced = 0;
  /** The last chunk ended in CR: an LF starting the next one is the same line break. */
  private pendingCR = false;
  private eventName: string | undefined;
  /** The first data line, and the rest only when there is more than one (the common event has one). */
  private firstData: string | undefined;
  private moreData: string[] | undefined;
  /** Characters held for the current event (data lines, event name). */
  private eventChars = 0;
  private failed = false;

  constructor(options: SSEParserOptions = {}) {
    this.maxEventChars = options.maxEventChars ?? DEFAULT_MAX_SSE_EVENT_CHARS;
  }

  /** The events completed by `chunk`. Throws {@link SSEEventTooLargeError} once an event passes the limit. */
  push(chunk: Uint8Array): SSEEvent[] {
    if (this.failed) return [];
    const out: SSEEvent[] = [];
    try {
      this.scan(this.decoder.decode(chunk, { stream: true }), out);
    } catch (err) {
      throw withEvents(err, out);
    }
    return out;
  }

  /** The stream ended: flushes a final line and event that were not terminated. */
  end(): SSEEvent[] {
    if (this.failed) return [];
    const out: SSEEvent[] = [];
    try {
      this.scan(this.decoder.decode(), out);
      if (this.partial.length > 0) this.line(this.takePartial(''), out);
    } catch (err) {
      throw withEvents(err, out);
    }
    this.dispatch(out);
    return out;
  }

  private scan(text: string, out: SSEEvent[]): void {
    let pos = 0;
    const length = text.length;
    if (this.pendingCR && length > 0) {
      this.pendingCR = false;
      if (text.charCodeAt(0) === LF) pos = 1;
    }
    // Next CR and LF at or after `pos`, each searched again only once `pos` passes it: linear.
    let nextLF = text.indexOf('\n', pos);
    let nextCR = text.indexOf('\r', pos);
    while (nextLF >= 0 || nextCR >= 0) {
      const end = nextCR < 0 || (nextLF >= 0 && nextLF < nextCR) ? nextLF : nextCR;
      const lineText = this.partial.length === 0 ? text.slice(pos, end) : this.takePartial(text.slice(pos, end));
      if (end === nextCR) {
        if (end + 1 === length) this.pendingCR = true;
        pos = nextLF === end + 1 ? end + 2 : end + 1;
      } else {
        pos = end + 1;
      }
      this.line(lineText, out);
      if (nextLF >= 0 && nextLF < pos) nextLF = text.indexOf('\n', pos);
      if (nextCR >= 0 && nextCR < pos) nextCR = text.indexOf('\r', pos);
    }
    if (pos < length) {
      const rest = pos === 0 ? text : text.slice(pos);
      this.partialChars += rest.length;
      this.check();
      this.partial.push(rest);
      // Tiny chunks (a peer writing a byte at a time) would make one list entry per byte: join
      // every COALESCE_PARTS new parts into one. Each character is copied once more at most.
      if (this.partial.length - this.coalesced >= COALESCE_PARTS) {
        this.partial.push(this.partial.splice(this.coalesced).join(''));
        this.coalesced = this.partial.length;
      }
    }
  }

  private takePartial(last: string): string {
    this.partial.push(last);
    const whole = this.partial.length === 1 ? last : this.partial.join('');
    this.partial = [];
    this.partialChars = 0;
    this.coalesced = 0;
    return whole;
  }

  private line(line: string, out: SSEEvent[]): void {
    if (line.length === 0) return this.dispatch(out);
    // Every line counts, kept or not, so the outcome cannot depend on where chunks split a line
    // (a partial line is checked at chunk ends, and it is a prefix of this one).
    if (this.eventChars + line.length > this.maxEventChars) this.fail();
    const first = line.charCodeAt(0);
    if (first === COLON) return;
    const colon = line.indexOf(':');
    const fieldEnd = colon < 0 ? line.length : colon;
    // Only `data` and `event` are kept; every other field (id, retry, unknown) is ignored.
    if (fieldEnd === 4 && line.startsWith('data')) this.addData(valueOf(line, colon));
    else if (fieldEnd === 5 && line.startsWith('event')) {
      const name = valueOf(line, colon);
      this.eventChars += name.length - (this.eventName?.length ?? 0);
      this.check();
      this.eventName = name;
    }
  }

  private addData(value: string): void {
    this.eventChars += value.length + 1;
    this.check();
    if (this.firstData === undefined) this.firstData = value;
    else (this.moreData ??= []).push(value);
  }

  /** The event so far plus the line being assembled must stay within the limit. */
  private check(): void {
    if (this.eventChars + this.partialChars > this.maxEventChars) this.fail();
  }

  private fail(): never {
    this.failed = true;
    this.partial = [];
    this.partialChars = 0;
    this.coalesced = 0;
    this.firstData = undefined;
    this.moreData = undefined;
    throw new SSEEventTooLargeError(this.maxEventChars);
  }

  private dispatch(out: SSEEvent[]): void {
    if (this.firstData !== undefined) {
      const data = this.moreData === undefined ? this.firstData : [this.firstData, ...this.moreData].join('\n');
      out.push(this.eventName === undefined ? { data } : { event: this.eventName, data });
    }
    this.eventName = undefined;
    this.firstData = undefined;
    this.moreData = undefined;
    this.eventChars = 0;
  }
}

function withEvents(err: unknown, events: SSEEvent[]): unknown {
  if (err instanceof SSEEventTooLargeError) err.events = events;
  return err;
}

/** A field's value: after the colon, minus one leading space; '' for a line without a colon. */
function valueOf(line: string, colon: number): string {
  if (colon < 0) return '';
  return line.charCodeAt(colon + 1) === SPACE ? line.slice(colon + 2) : line.slice(colon + 1);
}

/** One SSE event as text: `event:` when named, then the data line(s). */
export function formatSSE(data: string, event?: string): string {
  const lines = data.split('\n').map((l) => `data: ${l}`).join('\n');
  return event === undefined ? `${lines}\n\n` : `event: ${event}\n${lines}\n\n`;
}
