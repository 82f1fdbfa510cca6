/**
 * A local realtime provider speaking OpenAI's Realtime event shapes over WebSocket: it records
 * every handshake (path with query, headers, offered subprotocols), refuses a handshake without
 * the expected credential with a 401 JSON error as the real API does, greets with
 * `session.created`, and answers `response.create` with `response.created`, one
 * `response.output_text.delta` and `response.done` carrying usage; binary frames are echoed.
 */
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import { createServer as createTlsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { WebSocketServer, type WebSocket } from 'ws';

export interface Handshake {
  readonly url: string;
  readonly headers: IncomingHttpHeaders;
}

export interface MockRealtime {
  readonly host: string;
  readonly port: number;
  readonly handshakes: Handshake[];
  /** Every message the provider received, text as strings. */
  readonly received: (string | Buffer)[];
  stop(): Promise<void>;
}

export const REALTIME_USAGE = { total_tokens: 57, input_tokens: 40, output_tokens: 17, input_token_details: { cached_tokens: 8, text_tokens: 30, audio_tokens: 10 }, output_token_details: { text_tokens: 12, audio_tokens: 5 } };

/** `accept(headers)` says whether the handshake carries the right credential; with `tls` it speaks only TLS (wss://). */
export async function startMockRealtime(accept: (headers: IncomingHttpHeaders) => boolean, tls?: { readonly certPem: string; readonly keyPem: string }): Promise<MockRealtime> {
  const handshakes: Handshake[] = [];
  const received: (string | Buffer)[] = [];
  const wss = new WebSocketServer({ noServer: true, handleProtocols: (offered) => (offered.has('realtime') ? 'realtime' : false) });
  const notFound = (_req: unknown, res: { writeHead(status: number): { end(): void } }) => res.writeHead(404).end();
  const server: Server = tls ? createTlsServer({ cert: tls.certPem, key: tls.keyPem }, notFound) : createServer(notFound);
  server.on('upgrade', (req, socket, head) => {
    handshakes.push({ url: req.url ?? '', headers: req.headers });
    if (!accept(req.headers)) {
      const body = JSON.stringify({ error: { type: 'invalid_request_error', code: 'invalid_api_key', message: 'Incorrect API key provided.', param: null } });
      socket.end(`HTTP/1.1 401 Unauthorized\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n\r\n${body}`);
      return;
    }
    wss.handleUpgrade(req, socket, head, (ws) => serve(ws, new URL(req.url ?? '/', 'http://x').searchParams.get('model') ?? ''));
  });
  let n = 0;
  const id = (p: string) => `${p}_${++n}`;
  function serve(ws: WebSocket, model: string): void {
    ws.send(JSON.stringify({ type: 'session.created', event_id: id('event'), session: { type: 'realtime', object: 'realtime.session', id: id('sess'), model, output_modalities: ['text'] } }));
    ws.on('message', (data, isBinary) => {
      received.push(isBinary ? Buffer.from(data as Buffer) : data.toString());
      // Binary frames come back as binary (the real API never sends any; this proves the relay keeps the type).
      if (isBinary) return ws.send(data, { binary: true });
      const event = JSON.parse(data.toString()) as { type: string };
      if (event.type !== 'response.create') return;
      const response = { object: 'realtime.response', id: id('resp'), status: 'in_progress', output: [], usage: null };
      ws.send(JSON.stringify({ type: 'response.created', event_id: id('event'), response }));
      ws.send(JSON.stringify({ type: 'response.output_text.delta', event_id: id('event'), response_id: response.id, item_id: id('item'), output_index: 0, content_index: 0, delta: `Hello from ${model}` }));
      ws.send(JSON.stringify({ type: 'response.done', event_id: id('event'), response: { ...response, status: 'completed', usage: REALTIME_USAGE } }));
    });
  }
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    host: '127.0.0.1',
    port: (server.address() as AddressInfo).port,
    handshakes,
    received,
    async stop() {
      for (const c of wss.clients) c.terminate();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
