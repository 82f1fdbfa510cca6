import { createServer as createHttp1Server, type IncomingMessage, type Server as Http1Server } from 'node:http';
import { createSecureServer, createServer as createH2cServer, Http2ServerResponse, type Http2SecureServer, type Http2Server, type Http2Session, type Http2ServerRequest } from 'node:http2';
import { createServer as createNetServer, type AddressInfo, type Server as NetServer, type Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import type { CompiledBind } from '../compile/config.ts';
import { handleRequest, type BindContext } from '../pipeline/handle-request.ts';
import type { Telemetry } from '../pipeline/exchange.ts';
import { handleUpgrade } from '../pipeline/upgrade.ts';
import { handleConnect, handleConnectStream } from '../pipeline/connect.ts';
import { socketResponse } from '../pipeline/upgrade.ts';
import { http1TunnelClient, http2TunnelClient, type TunnelClient } from '../http/tunnel.ts';
import { normalizeHost } from '../routing/host.ts';
import { sniffProtocol } from './h2c-sniff.ts';
import type { CertificatePair } from '../compile/tls-contexts.ts';
import { acceptConnection, inheritClientAddress } from '../policies/frontend/accept.ts';
import { applyServerSettings, closeIdleSession, limitHttp1Connection, refuseConnectSocket, refuseConnectStream, trackHttp1Request, watchSession } from '../policies/frontend/server-settings.ts';

export interface ListenOptions {
  readonly host: string;
  readonly port: number;
  readonly reusePort: boolean;
  /** The bind serving a Gateway (IR) port, for frontend `connect.mode: Tunnel`. */
  readonly bindFor?: (irPort: number) => BindServer | undefined;
}

const DRAIN_SWEEP_MS = 50;
/**
 * Nagle off, as node's own http server does: the raw listener we accept on would otherwise leave
 * it on, and a streamed response's second small write (an SSE event, a gRPC message) would wait
 * for the client's delayed ACK.
 */
const LISTENER_OPTIONS = { noDelay: true } as const;

/**
 * One listening port. Plain binds speak HTTP/1.1 and h2c (prior knowledge) on the same port;
 * HTTPS binds terminate TLS, pick the certificate by SNI across the listeners sharing the port,
 * and offer h2 and http/1.1 by ALPN. The compiled bind is swapped in place on config changes.
 */
export class BindServer {
  readonly ctx: BindContext;
  readonly protocol: 'HTTP' | 'HTTPS';
  /** Accepts raw connections; frontend connection handling runs before TLS or HTTP sees them. */
  readonly #listener: NetServer;
  readonly #http1: Http1Server | undefined;
  readonly #h2: Http2Server | Http2SecureServer;
  readonly #sockets = new Set<Socket>();
  readonly #sessions = new Set<Http2Session>();
  readonly #telemetry: Telemetry;
  #defaultPair: CertificatePair | undefined;
  #bindFor: ((irPort: number) => BindServer | undefined) | undefined;

  private constructor(compiled: CompiledBind, telemetry: Telemetry) {
    this.protocol = compiled.protocol;
    this.#telemetry = telemetry;
    this.ctx = { compiled, draining: false, scheme: compiled.protocol === 'HTTPS' ? 'https' : 'http', telemetry };
    const onRequest = (req: IncomingMessage | Http2ServerRequest, res: Parameters<typeof handleRequest>[2]) => handleRequest(this.ctx, req, res);
    const frontend = compiled.frontend;
    const onUpgrade = (req: IncomingMessage, socket: Duplex, head: Buffer) => handleUpgrade(this.ctx, req, socket, head);
    // CONNECT per frontend.connect, on every bind and protocol: node emits 'connect' with
    // (req, socket, head) for HTTP/1.1 — on an HTTPS bind too, inside TLS — and with (req, res)
    // for an HTTP/2 CONNECT stream (RFC 9113 §8.5).
    const onConnect = (req: IncomingMessage | Http2ServerRequest, second: Duplex | Http2ServerResponse, head?: Buffer) => {
      const mode = this.ctx.compiled.frontend?.connect;
      const stream = second instanceof Http2ServerResponse;
      if (mode !== 'Route' && mode !== 'Tunnel') {
        if (stream) refuseConnectStream(second);
        else refuseConnectSocket(second);
        return;
      }
      if (stream) {
        const h2req = req as Http2ServerRequest;
        if (mode === 'Route') handleConnectStream(this.ctx, h2req, second);
        else this.#tunnelToBind(h2req.headers[':authority'], http2TunnelClient(h2req, second));
        return;
      }
      const h1req = req as IncomingMessage;
      if (mode === 'Route') handleConnect(this.ctx, h1req, second, head ?? Buffer.alloc(0));
      else this.#tunnelToBind(h1req.url, http1TunnelClient(second as Socket, head ?? Buffer.alloc(0), socketResponse(h1req, second)));
    };

    if (compiled.protocol === 'HTTPS') {
      const tls = compiled.tls;
      // A self-signed stand-in would be worse than refusing: an HTTPS bind needs a real certificate.
      if (!tls) throw new Error('HTTPS bind has no usable certificate');
      this.#defaultPair = tls.fallbackPair;
      const secure = createSecureServer({
        ...frontend?.tls.contextOptions,
        ...(frontend ? { handshakeTimeout: frontend.tls.handshakeTimeoutMs, ALPNProtocols: [...frontend.tls.alpnProtocols], settings: frontend.http.http2Settings } : {}),
        allowHTTP1: true,
        cert: tls.fallbackPair.certPem,
        key: tls.fallbackPair.keyPem,
        SNICallback: (servername, cb) => {
          const current = this.ctx.compiled.tls;
          cb(null, current?.bySni.lookup(normalizeHost(servername)) ?? current?.fallback);
        },
      });
      this.#h2 = secure;
      this.#listener = createNetServer(LISTENER_OPTIONS, (socket) => acceptConnection(socket, this.ctx.compiled.frontend, () => secure.emit('connection', socket)));
      this.#http1 = undefined;
      secure.on('secureConnection', (tlsSocket: Socket & { alpnProtocol?: string | false }) => {
        inheritClientAddress(tlsSocket);
        if (tlsSocket.alpnProtocol !== 'h2') limitHttp1Connection(tlsSocket, this.ctx.compiled.frontend);
      });
      secure.on('request', (req: Http2ServerRequest | IncomingMessage, res: Http2ServerResponse) => onRequest(req, res));
      secure.on('upgrade', onUpgrade);
      secure.on('connect', onConnect);
    } else {
      const http1 = createHttp1Server(onRequest);
      http1.on('upgrade', onUpgrade);
      http1.on('connect', onConnect);
      http1.on('request', trackHttp1Request);
      // This server never listens itself (the sniffer hands it sockets), but node only starts its
      // connection tracking — headers/request timeouts, closeIdleConnections — on 'listening'.
      http1.emit('listening');
      const h2c = createH2cServer(frontend ? { settings: frontend.http.http2Settings } : {}, onRequest);
      h2c.on('connect', onConnect);
      this.#http1 = http1;
      this.#h2 = h2c;
      this.#listener = createNetServer(LISTENER_OPTIONS, (socket) => acceptConnection(socket, this.ctx.compiled.frontend, () => {
        sniffProtocol(socket, (protocol) => {
          if (protocol === 'h2') h2c.emit('connection', socket);
          else {
            limitHttp1Connection(socket, this.ctx.compiled.frontend);
            http1.emit('connection', socket);
            socket.resume();
          }
        });
      }));
    }
    applyServerSettings(this.#http1, this.#h2, frontend);
    this.#h2.on('session', (session: Http2Session) => {
      watchSession(session, this.ctx.compiled.frontend);
      closeIdleSession(session, this.ctx.compiled.frontend);
      this.#sessions.add(session);
      session.once('close', () => this.#sessions.delete(session));
    });
    this.#listener.on('connection', (socket: Socket) => {
      this.#sockets.add(socket);
      telemetry.metrics.activeConnections.inc();
      socket.once('close', () => {
        this.#sockets.delete(socket);
        telemetry.metrics.activeConnections.dec();
      });
      // A client that resets must not raise an unhandled error.
      socket.on('error', () => socket.destroy());
    });
  }

  static async open(compiled: CompiledBind, telemetry: Telemetry, opts: ListenOptions): Promise<BindServer> {
    const server = new BindServer(compiled, telemetry);
    server.#bindFor = opts.bindFor;
    await new Promise<void>((resolve, reject) => {
      server.#listener.once('error', reject);
      server.#listener.listen({ host: opts.host, port: opts.port, reusePort: opts.reusePort }, () => {
        server.#listener.off('error', reject);
        resolve();
      });
    });
    server.#listener.on('error', (err) => telemetry.logger.error({ err, bind: compiled.key }, 'listener error'));
    return server;
  }

  get port(): number {
    return (this.#listener.address() as AddressInfo | null)?.port ?? 0;
  }

  /**
   * frontend `connect.mode: Tunnel`: the CONNECT authority's port names a Gateway port; after
   * `200` the tunnelled stream (the HTTP/1.1 socket, or the HTTP/2 CONNECT stream) enters that
   * bind as a new downstream connection, so its frontend policies (PROXY protocol, network
   * authorization, TLS) and every request's lifecycle (authorization included) apply as to a
   * direct client. No bind on that port: 404.
   */
  #tunnelToBind(authority: string | undefined, client: TunnelClient): void {
    const port = Number(/:(\d{1,5})$/.exec(authority ?? '')?.[1]);
    const target = Number.isInteger(port) ? this.#bindFor?.(port) : undefined;
    if (!target || !target.listening) {
      const body = '{"error":{"code":"route_not_found","message":"no gateway listener on the CONNECT port"}}';
      client.answer(404, body);
      return;
    }
    target.acceptTunnelled(client.establishAsConnection());
  }

  /** A connection that arrived through another bind's CONNECT tunnel: handled as if accepted here. */
  acceptTunnelled(socket: Socket): void {
    this.#listener.emit('connection', socket);
    socket.resume();
  }

  get listening(): boolean {
    return this.#listener.listening;
  }

  /** Requests that start after this see `compiled`; those in flight keep theirs. */
  swap(compiled: CompiledBind): void {
    this.ctx.compiled = compiled;
    applyServerSettings(this.#http1, this.#h2, compiled.frontend);
    const pair = compiled.tls?.fallbackPair;
    if (pair && this.#defaultPair && (pair.certPem !== this.#defaultPair.certPem || pair.keyPem !== this.#defaultPair.keyPem)) {
      // Clients without SNI get the server's default context; SNICallback covers the rest.
      (this.#h2 as Http2SecureServer).setSecureContext({ ...compiled.frontend?.tls.contextOptions, cert: pair.certPem, key: pair.keyPem });
      this.#defaultPair = pair;
    }
  }

  /**
   * Stop accepting, let in-flight requests finish (HTTP/1 connections close after their current
   * response, HTTP/2 sessions get GOAWAY), and destroy whatever is left after `graceMs`.
   */
  async drain(graceMs: number): Promise<void> {
    this.ctx.draining = true;
    const closed = new Promise<void>((resolve) => this.#listener.close(() => resolve()));
    // Stops the HTTP/1 server's connection checker and closes its idle keep-alive connections.
    this.#http1?.close(() => undefined);
    for (const session of this.#sessions) session.close();
    let timer: NodeJS.Timeout | undefined;
    const forced = new Promise<void>((resolve) => {
      timer = setTimeout(() => {
        for (const socket of this.#sockets) socket.destroy();
        for (const session of this.#sessions) session.destroy();
        resolve();
      }, graceMs);
    });
    // Keep-alive connections whose response was in flight when draining began go idle later;
    // close them as they do, for as long as the grace period lasts.
    const sweeper = setInterval(() => this.#http1?.closeIdleConnections(), DRAIN_SWEEP_MS);
    const idle = this.#whenNoSockets();
    await Promise.race([Promise.all([closed, idle]), forced]);
    clearTimeout(timer);
    clearInterval(sweeper);
    this.#telemetry.logger.debug({ bind: this.ctx.compiled.key }, 'bind drained');
  }

  #whenNoSockets(): Promise<void> {
    if (this.#sockets.size === 0) return Promise.resolve();
    return new Promise((resolve) => {
      let remaining = this.#sockets.size;
      for (const socket of this.#sockets) socket.once('close', () => --remaining === 0 && resolve());
    });
  }
}
