/**
 * Server-sent events, both directions. The parser accepts any chunk boundaries (mid-line,
 * mid-CRLF, mid-UTF-8 sequence) because upstream TCP reads split wherever they like.
 */
export interface SSEEvent {
  readonly event?: string;
  readonly data: string;
}

export class SSEParser {
  private readonly decoder = new TextDecoder('utf-8');
  private buffer = '';
  private eventName: string | undefined;
  private data: string[] = [];
  /** A chunk ended in `\r`: a `\n` at the start of the next chunk belongs to the same line break. */
  private pendingCR = false;

  push(chunk: Uint8Array): SSEEvent[] {
    let text = this.decoder.decode(chunk, { stream: true });
    if (this.pendingCR && text.startsWith('\n')) text = text.slice(1);
    this.pendingCR = false;
    this.buffer += text;
    return this.drain();
  }

  /** Flushes a final event that was not followed by a blank line. */
  end(): SSEEvent[] {
    this.buffer += this.decoder.decode();
    const out = this.drain();
    if (this.buffer !== '') this.line(this.buffer, out);
    this.buffer = '';
    this.dispatch(out);
    return out;
  }

  private drain(): SSEEvent[] {
    const out: SSEEvent[] = [];
    let start = 0;
    for (;;) {
      const rel = this.buffer.slice(start).search(/\r\n|\r|\n/);
      if (rel < 0) break;
      const i = start + rel;
      const line = this.buffer.slice(start, i);
      if (this.buffer[i] === '\r' && i + 1 === this.buffer.length) {
        this.pendingCR = true;
        start = i + 1;
      } else {
        start = i + (this.buffer.startsWith('\r\n', i) ? 2 : 1);
      }
      this.line(line, out);
    }
    this.buffer = this.buffer.slice(start);
    return out;
  }

  private line(line: string, out: SSEEvent[]): void {
    if (line === '') return this.dispatch(out);
    if (line.startsWith(':')) return;
    const colon = line.indexOf(':');
    const field = colon < 0 ? line : line.slice(0, colon);
    let value = colon < 0 ? '' : line.slice(colon + 1);
    if (value.startsWith(' ')) value = value.slice(1);
    if (field === 'event') this.eventName = value;
    else if (field === 'data') this.data.push(value);
  }

  private dispatch(out: SSEEvent[]): void {
    if (this.data.length > 0) out.push(this.eventName === undefined ? { data: this.data.join('\n') } : { event: this.eventName, data: this.data.join('\n') });
    this.eventName = undefined;
    this.data = [];
  }
}

/** One SSE event as text: `event:` when named, then the data line(s). */
export function formatSSE(data: string, event?: string): string {
  const lines = data.split('\n').map((l) => `data: ${l}`).join('\n');
  return event === undefined ? `${lines}\n\n` : `event: ${event}\n${lines}\n\n`;
}
