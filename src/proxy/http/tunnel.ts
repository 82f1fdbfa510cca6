/**
 * The client side of an accepted CONNECT (pipeline/connect.ts, the dynamic forward proxy, frontend
 * Tunnel mode), for HTTP/1.1 and HTTP/2 alike. On HTTP/1.1 the CONNECT takes the connection: the
 * answer is a status line on the raw socket and the socket carries the tunnel. On HTTP/2 (RFC 9113
 * §8.5) the CONNECT is one stream: `:status 200` in a HEADERS frame, then DATA frames carry the
 * tunnel and END_STREAM half-closes it; the connection's other streams go on.
 */
import type { ServerResponse } from 'node:http';
import type { Http2ServerRequest, Http2ServerResponse } from 'node:http2';
import type { Socket } from 'node:net';
import { Duplex, type Readable, type Writable } from 'node:stream';

const ESTABLISHED = 'HTTP/1.1 200 Connection Established\r\n\r\n';

/** Both response kinds render a head the same way; node's typings do not say so. */
function answerOn(res: ServerResponse | Http2ServerResponse, status: number, body: string): void {
  (res as ServerResponse).writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) }).end(body);
}

export interface TunnelClient {
  /** Where every answer before the tunnel goes (refusals, and the lifecycle's own answers). */
  readonly res: ServerResponse | Http2ServerResponse;
  /** Bytes the client sent after its HTTP/1.1 CONNECT head (empty on HTTP/2). */
  readonly head: Buffer;
  /** A JSON answer instead of the tunnel (a refusal); the client side closes after it. */
  answer(status: number, body: string): void;
  /** Answers `200` and returns the tunnel's client end: what the client sends, where its bytes go. */
  establish(): { readonly input: Readable; readonly output: Writable };
  /** The client end as a connection another bind can accept (frontend Tunnel mode); answers `200`. */
  establishAsConnection(): Socket;
  /** Tears the client side down (the HTTP/2 stream only, never its connection). */
  destroy(): void;
}

/** HTTP/1.1: `res` writes on `socket` until `establish` takes the socket over. */
export function http1TunnelClient(socket: Socket, head: Buffer, res: ServerResponse): TunnelClient {
  return {
    res,
    head,
    answer: (status, body) => answerOn(res, status, body),
    establish() {
      res.detachSocket(socket);
      socket.write(ESTABLISHED);
      return { input: socket, output: socket };
    },
    establishAsConnection() {
      res.detachSocket(socket);
      socket.write(ESTABLISHED);
      if (head.length > 0) socket.unshift(head);
      return socket;
    },
    destroy: () => socket.destroy(),
  };
}

/** HTTP/2: the CONNECT stream's request (reading) and response (writing) are the tunnel's client end. */
export function http2TunnelClient(req: Http2ServerRequest, res: Http2ServerResponse): TunnelClient {
  return {
    res,
    head: Buffer.alloc(0),
    answer: (status, body) => answerOn(res, status, body),
    establish() {
      res.writeHead(200);
      return { input: req, output: res };
    },
    establishAsConnection() {
      res.writeHead(200);
      return streamConnection(req, res);
    },
    destroy: () => req.stream.destroy(),
  };
}

/**
 * After `200`, bytes flow both ways until both sides are done or either fails;
 * `done(200, bytes sent to the client)` once. An end from one side half-closes the other
 * (FIN on TCP, END_STREAM on HTTP/2), as a tunnel should.
 */
export function splice(client: TunnelClient, upstream: Duplex, done: (status: number, bytes: number) => void): void {
  let bytes = 0;
  let finished = false;
  const { input, output } = client.establish();
  const finish = () => {
    if (finished) return;
    finished = true;
    client.destroy();
    upstream.destroy();
    done(200, bytes);
  };
  upstream.on('data', (chunk: Buffer) => {
    bytes += chunk.length;
  });
  upstream.on('error', finish);
  input.on('error', finish);
  output.on('error', finish);
  upstream.once('close', finish);
  output.once('close', finish);
  if (client.head.length > 0) upstream.write(client.head);
  upstream.pipe(output);
  input.pipe(upstream);
}

/**
 * An HTTP/2 CONNECT stream dressed as an accepted connection, so a bind's listener (frontend
 * policies, protocol sniffing, HTTP/1.1, h2c or TLS on top) takes it as it takes a socket. The
 * client's address is the HTTP/2 connection's: network authorization sees the real client.
 */
function streamConnection(req: Http2ServerRequest, res: Http2ServerResponse): Socket {
  const outer = req.socket;
  // A socket's idle timeout: restarted by traffic either way.
  let timer: NodeJS.Timeout | undefined;
  let idleMs = 0;
  const touch = () => {
    if (idleMs === 0) return;
    clearTimeout(timer);
    timer = setTimeout(() => connection.emit('timeout'), idleMs);
  };
  const connection = new Duplex({
    read() {
      req.resume();
    },
    write(chunk: Buffer, _encoding, callback) {
      touch();
      if (res.write(chunk)) callback();
      else res.once('drain', () => callback());
    },
    final(callback) {
      res.end(() => callback());
    },
    destroy(err, callback) {
      clearTimeout(timer);
      req.stream.destroy();
      callback(err);
    },
  });
  req.on('data', (chunk: Buffer) => {
    touch();
    if (!connection.push(chunk)) req.pause();
  });
  req.once('end', () => connection.push(null));
  res.once('close', () => connection.destroy());
  // What the listener, its frontend policies and node's HTTP servers read of a socket.
  Object.assign(connection, {
    remoteAddress: outer.remoteAddress,
    remotePort: outer.remotePort,
    remoteFamily: outer.remoteFamily,
    localAddress: outer.localAddress,
    localPort: outer.localPort,
    encrypted: false,
    setNoDelay: () => connection,
    setKeepAlive: () => connection,
    setTimeout(ms: number, onTimeout?: () => void) {
      clearTimeout(timer);
      if (onTimeout) connection.once('timeout', onTimeout);
      idleMs = ms;
      touch();
      return connection;
    },
    ref: () => connection,
    unref: () => connection,
  });
  return connection as unknown as Socket;
}
