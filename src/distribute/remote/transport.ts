/**
 * The listening side of the config stream: gRPC over HTTP/2 in one of SPEC.md's
 * `controller.xds.mode`s — `plaintext` (h2c), `tls` (h2 over TLS), or `either`: both on one port,
 * told apart by the first byte a client sends (a TLS record starts with 0x16, handshake; an h2c
 * connection with the ASCII preface `PRI * HTTP/2.0`).
 */
import http2, { type Http2Session } from 'node:http2';
import net, { type AddressInfo, type Socket } from 'node:net';

export const TRANSPORT_MODES = ['plaintext', 'tls', 'either'] as const;
export type TransportMode = (typeof TRANSPORT_MODES)[number];

export interface ServerTls {
  readonly certPem: string;
  readonly keyPem: string;
}

type Handler = (req: http2.Http2ServerRequest, res: http2.Http2ServerResponse) => void;

const TLS_HANDSHAKE = 0x16;
/** A connection that sends nothing this long is closed before any protocol is chosen. */
const FIRST_BYTE_TIMEOUT_MS = 10_000;

export interface ConfigListener {
  /** Resolves with the address once listening (port 0 picks a free one). */
  listen(port: number, host: string): Promise<AddressInfo>;
  /** Stops accepting and ends every open session (proxies reconnect elsewhere). */
  close(): Promise<void>;
  /** Open HTTP/2 sessions (connected proxies hold one each). */
  readonly sessionCount: number;
}

/**
 * A session with no traffic this long is closed: proxies ping every 10 s (client.ts), so only a
 * proxy that vanished without closing its connection (a node lost) goes quiet, and it should stop
 * counting as connected and acknowledged.
 */
export const DEFAULT_SESSION_IDLE_TIMEOUT_MS = 45_000;

export function createConfigListener(mode: TransportMode, handler: Handler, tls?: ServerTls, idleTimeoutMs = DEFAULT_SESSION_IDLE_TIMEOUT_MS): ConfigListener {
  if (mode !== 'plaintext' && !tls) throw new Error(`transport mode ${mode} needs a certificate and key`);
  const sessions = new Set<Http2Session>();
  const track = (server: http2.Http2Server | http2.Http2SecureServer): void => {
    server.on('session', (session: Http2Session) => {
      sessions.add(session);
      session.once('close', () => sessions.delete(session));
      session.setTimeout(idleTimeoutMs, () => session.destroy());
      // Node answers PINGs natively and only tells JavaScript (which restarts the idle timer)
      // when someone listens: without this, a proxy's keepalive pings would not keep it alive.
      session.on('ping', () => {});
    });
  };
  const plain = mode === 'tls' ? undefined : http2.createServer(handler);
  const secure = mode === 'plaintext' || !tls ? undefined : http2.createSecureServer({ cert: tls.certPem, key: tls.keyPem, ALPNProtocols: ['h2'] }, handler);
  if (plain) track(plain);
  if (secure) track(secure);

  const front: net.Server = mode === 'either' ? net.createServer((socket) => sniff(socket, plain as http2.Http2Server, secure as http2.Http2SecureServer)) : (plain ?? secure) as net.Server;

  return {
    listen: (port, host) => new Promise((resolve, reject) => {
      front.once('error', reject);
      front.listen(port, host, () => {
        front.off('error', reject);
        resolve(front.address() as AddressInfo);
      });
    }),
    close: () => new Promise<void>((resolve) => {
      front.close(() => resolve());
      for (const session of sessions) session.destroy();
      if (mode === 'either') {
        plain?.close();
        secure?.close();
      }
    }),
    get sessionCount() {
      return sessions.size;
    },
  };
}

/** Hands the connection to the TLS or the plaintext server by its first byte, which is put back. */
function sniff(socket: Socket, plain: http2.Http2Server, secure: http2.Http2SecureServer): void {
  socket.setTimeout(FIRST_BYTE_TIMEOUT_MS, () => socket.destroy());
  socket.once('error', () => socket.destroy());
  socket.once('data', (first: Buffer) => {
    socket.setTimeout(0);
    socket.pause();
    socket.unshift(first);
    (first[0] === TLS_HANDSHAKE ? secure : plain).emit('connection', socket);
  });
}
