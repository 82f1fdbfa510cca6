import { connect as netConnect, isIP, type Socket } from 'node:net';
import { connect as tlsConnect, type ConnectionOptions } from 'node:tls';
import type { PolicyEndpoint } from '../../../ir/policy.ts';
import type { ResolvedEndpoint, TargetTls } from '../../ext/endpoint.ts';
import { liveTargets } from './service-targets.ts';

/** An HTTP CONNECT proxy the backend is reached through (backend `tunnel`). */
export interface TunnelProxy {
  readonly host: string;
  readonly port: number;
  /** Spoken to over TLS: `true` for an `https://` URL (system CAs), Node TLS options from a backend's `tls` policy. */
  readonly tls: boolean | TargetTls;
}

/** The proxies of a `tunnel`: a URL's one, or each ready endpoint of a backend in turn. */
export interface TunnelProxies {
  /** The proxy the next connection goes through. */
  next(): TunnelProxy;
}

/** The proxy's answer head may not exceed this many bytes. */
const MAX_RESPONSE_HEAD = 16 * 1024;

/**
 * A `url` is one proxy; a `backendRef` is its backend's ready endpoints, round robin per
 * connection, with the TLS of the backend policies attached to it, as the newest config says
 * (service-targets.ts: the settings holding it are cached by policy object across versions).
 * Throws for a tunnel it cannot use (no ready endpoint, bad scheme): the caller fails closed.
 */
export function tunnelProxyOf(endpoint: PolicyEndpoint): TunnelProxies {
  if (endpoint.backendKey !== undefined) {
    const targets = liveTargets(endpoint.backendKey);
    return { next: () => proxyOf(targets.next()) };
  }
  if (!endpoint.url) throw new Error('backend tunnel needs a backendRef or url');
  const url = new URL(endpoint.url);
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new Error(`backend tunnel: unsupported scheme ${url.protocol}`);
  const tls = url.protocol === 'https:';
  const proxy: TunnelProxy = { host: url.hostname.replace(/^\[|\]$/g, ''), port: url.port === '' ? (tls ? 443 : 80) : Number(url.port), tls };
  return { next: () => proxy };
}

function proxyOf(target: ResolvedEndpoint): TunnelProxy {
  return { host: target.host, port: target.port, tls: target.tls ?? false };
}

/**
 * Opens a socket to `target` through the proxy: connect, `CONNECT host:port`, wait for a 2xx, and
 * hand over the raw stream (bytes after the proxy's answer are put back). Errors go to `callback`.
 */
export function openTunnel(proxy: TunnelProxy, target: { host: string; port: number }, callback: (err: Error | null, socket: Socket) => void): Socket {
  const socket: Socket = proxy.tls ? tlsConnect(tlsOptions(proxy, proxy.tls)) : netConnect({ host: proxy.host, port: proxy.port });
  const authority = target.host.includes(':') ? `[${target.host}]:${target.port}` : `${target.host}:${target.port}`;
  socket.once(proxy.tls ? 'secureConnect' : 'connect', () => {
    socket.write(`CONNECT ${authority} HTTP/1.1\r\nHost: ${authority}\r\n\r\n`);
  });
  let head: Buffer = Buffer.alloc(0);
  const onData = (chunk: Buffer) => {
    head = Buffer.concat([head, chunk]);
    const end = head.indexOf('\r\n\r\n');
    if (end < 0) {
      if (head.length > MAX_RESPONSE_HEAD) finish(new Error('backend tunnel: the proxy answer head is too long'));
      return;
    }
    const status = Number(/^HTTP\/1\.[01] (\d{3})/.exec(head.subarray(0, end).toString('latin1'))?.[1] ?? 0);
    if (status < 200 || status > 299) {
      finish(new Error(`backend tunnel: the proxy answered CONNECT with ${status || 'an invalid response'}`));
      return;
    }
    const rest = head.subarray(end + 4);
    socket.off('data', onData);
    socket.pause();
    if (rest.length > 0) socket.unshift(rest);
    finish(null);
  };
  let finished = false;
  const finish = (err: Error | null) => {
    if (finished) return;
    finished = true;
    socket.off('data', onData);
    callback(err, socket);
  };
  socket.on('data', onData);
  socket.once('error', (err) => finish(err));
  socket.once('close', () => finish(new Error('backend tunnel: the proxy closed the connection')));
  return socket;
}

/** TLS to the proxy: a policy's options as they are (their SNI), else the system CAs and the proxy's name. */
function tlsOptions(proxy: TunnelProxy, tls: true | TargetTls): ConnectionOptions {
  const servername = typeof tls === 'object' ? tls.servername : isIP(proxy.host) === 0 ? proxy.host : undefined;
  return { ...(typeof tls === 'object' ? tls : {}), host: proxy.host, port: proxy.port, ALPNProtocols: ['http/1.1'], ...(servername !== undefined ? { servername } : {}) };
}
