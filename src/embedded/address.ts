import type http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface ListenAddress {
  readonly host: string;
  readonly port: number;
}

/**
 * `host:port`, `[ipv6]:port` or `:port` (every interface). Throws with a message fit for the
 * command line.
 */
export function parseListenAddress(text: string, flag: string): ListenAddress {
  const match = /^(?:\[([^\]]+)\]|([^:[\]]*)):(\d{1,5})$/.exec(text);
  const port = match ? Number(match[3]) : NaN;
  if (!match || port > 65535) throw new Error(`${flag} must look like HOST:PORT, [IPv6]:PORT or :PORT (port 0-65535), got "${text}"`);
  return { host: match[1] ?? (match[2] || '0.0.0.0'), port };
}

/** Starts `server` and resolves with the address it really got (port 0 picks a free one). */
export function listen(server: http.Server, address: ListenAddress): Promise<AddressInfo> {
  return new Promise((resolve, reject) => {
    const onError = (err: Error): void => reject(err);
    server.once('error', onError);
    server.listen(address.port, address.host, () => {
      server.off('error', onError);
      resolve(server.address() as AddressInfo);
    });
  });
}

export function closeServer(server: http.Server): Promise<void> {
  return new Promise((resolve) => {
    server.close(() => resolve());
    server.closeIdleConnections();
  });
}
