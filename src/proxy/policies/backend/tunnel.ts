import { connect as netConnect, type Socket } from 'node:net';
import { connect as tlsConnect } from 'node:tls';
import type { PolicyEndpoint } from '../../../ir/policy.ts';

/** An HTTP CONNECT proxy the backend is reached through (backend `tunnel`). */
export interface TunnelProxy {
  readonly host: string;
  readonly port: number;
  /** `https://` proxies are spoken to over TLS (system CAs). */
  readonly tls: boolean;
}

/** The proxy's answer head may not exceed this many bytes. */
const MAX_RESPONSE_HEAD = 16 * 1024;

/** Only `url` endpoints: a `backendRef` proxy is not supported yet (the caller fails closed). */
export function tunnelProxyOf(endpoint: PolicyEndpoint): TunnelProxy {
  if (!endpoint.url) throw new Error('backend tunnel: backendRef endpoints are not supported yet; use url');
  const url = new URL(endpoint.url);
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new Error(`backend tunnel: unsupported scheme ${url.protocol}`);
  const tls = url.protocol === 'https:';
  return { host: url.hostname.replace(/^\[|\]$/g, ''), port: url.port === '' ? (tls ? 443 : 80) : Number(url.port), tls };
}

/**
 * Opens a socket to `target` through the proxy: connect, `CONNECT host:port`, wait for a 2xx, and
 * hand over the raw stream (bytes after the proxy's answer are put back). Errors go to `callback`.
 */
export function openTunnel(proxy: TunnelProxy, target: { host: string; port: number }, callback: (err: Error | null, socket: Socket) => void): Socket {
  const socket: Socket = proxy.tls ? tlsConnect({ host: proxy.host, port: proxy.port, servername: proxy.host, ALPNProtocols: ['http/1.1'] }) : netConnect({ host: proxy.host, port: proxy.port });
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
