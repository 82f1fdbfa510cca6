import type { Socket } from 'node:net';
import { authorize, createActivation } from '../../../cel/index.ts';
import type { CompiledFrontend } from './compile.ts';
import { parseProxyHeader, type ProxiedAddress } from './proxy-protocol.ts';

/** A connection that has not finished its PROXY header by then is closed. */
const PROXY_HEADER_TIMEOUT_MS = 10_000;

/**
 * What every new downstream connection goes through before any protocol handling: TCP
 * keepalive, the PROXY header (its address becomes the client address), then network
 * authorization. `proceed` gets the socket with every byte after the header still unread.
 */
export function acceptConnection(socket: Socket, frontend: CompiledFrontend | undefined, proceed: (socket: Socket) => void): void {
  if (!frontend) {
    proceed(socket);
    return;
  }
  if (frontend.invalid.length > 0) {
    socket.destroy();
    return;
  }
  if (frontend.keepaliveMs !== undefined) socket.setKeepAlive(true, frontend.keepaliveMs);
  const authorizeThen = () => {
    if (frontend.networkRules && !connectionAllowed(frontend, socket)) socket.destroy();
    else proceed(socket);
  };
  if (frontend.proxyProtocol) readProxyHeader(socket, frontend.proxyProtocol, authorizeThen);
  else authorizeThen();
}

function connectionAllowed(frontend: CompiledFrontend, socket: Socket): boolean {
  const activation = createActivation({ source: { address: socket.remoteAddress ?? '', port: socket.remotePort ?? 0 } });
  return authorize(frontend.networkRules ?? [], activation).allowed;
}

function readProxyHeader(socket: Socket, settings: NonNullable<CompiledFrontend['proxyProtocol']>, then: () => void): void {
  let seen: Buffer = Buffer.alloc(0);
  socket.setTimeout(PROXY_HEADER_TIMEOUT_MS, () => socket.destroy());
  const finish = (rest: Buffer) => {
    socket.off('data', onData);
    socket.setTimeout(0);
    // Paused while the bytes after the header go back, so none is emitted before the next reader listens.
    socket.pause();
    if (rest.length > 0) socket.unshift(rest);
    then();
    if (!socket.destroyed && socket.listenerCount('data') > 0) socket.resume();
  };
  const onData = (chunk: Buffer) => {
    seen = seen.length === 0 ? chunk : Buffer.concat([seen, chunk]);
    const result = parseProxyHeader(seen, settings.version);
    switch (result.kind) {
      case 'incomplete':
        return;
      case 'header':
        if (result.source) setClientAddress(socket, result.source);
        finish(seen.subarray(result.length));
        return;
      case 'absent':
        // Optional: plain traffic is fine. Strict: the header is required.
        if (settings.mode === 'Optional') finish(seen);
        else socket.destroy();
        return;
      case 'invalid':
        socket.destroy();
    }
  };
  socket.on('data', onData);
}

/**
 * The address a PROXY header carried replaces the peer's for everything downstream (routing
 * context, X-Forwarded-For, CEL `source`, logs): own properties shadow the socket's getters.
 */
export function setClientAddress(socket: Socket, source: ProxiedAddress): void {
  Object.defineProperty(socket, 'remoteAddress', { value: source.address, configurable: true });
  Object.defineProperty(socket, 'remotePort', { value: source.port, configurable: true });
  Object.defineProperty(socket, 'remoteFamily', { value: source.address.includes(':') ? 'IPv6' : 'IPv4', configurable: true });
}

/** A TLS socket wraps the raw one: it inherits an address set from a PROXY header. */
export function inheritClientAddress(tlsSocket: Socket): void {
  const parent = (tlsSocket as Socket & { _parent?: Socket })._parent;
  if (parent && Object.hasOwn(parent, 'remoteAddress')) setClientAddress(tlsSocket, { address: parent.remoteAddress ?? '', port: parent.remotePort ?? 0 });
}
