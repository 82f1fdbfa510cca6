/**
 * Where a dynamic forward proxy sends a request: the authority the client named, from the Host
 * header (`:authority` on HTTP/2), the absolute-form request target, or the TLS SNI. Only a
 * plain DNS name or IP literal and an optional port are accepted: user info, paths and other
 * characters are refused so the name cannot smuggle a second destination.
 */
import { isIP } from 'node:net';

export interface Destination {
  /** A lower-case DNS name or an IP literal (IPv6 without brackets). */
  readonly host: string;
  readonly port: number;
  /** The client asked for `https://` (absolute-form): the upstream is reached over TLS. */
  readonly tls?: boolean;
}

/** DNS names: labels of letters, digits, hyphens and underscores, 253 characters at most. */
const NAME = /^(?=.{1,253}$)[a-z0-9_](?:[a-z0-9_-]{0,61}[a-z0-9_])?(?:\.[a-z0-9_](?:[a-z0-9_-]{0,61}[a-z0-9_])?)*\.?$/;

/** `host[:port]` or `[v6][:port]` → a destination, or undefined when it is not one. */
export function parseAuthority(authority: string | undefined, defaultPort: number): Destination | undefined {
  if (authority === undefined || authority.length === 0 || authority.length > 260) return undefined;
  let host: string;
  let portText: string | undefined;
  if (authority.startsWith('[')) {
    const end = authority.indexOf(']');
    if (end < 0) return undefined;
    host = authority.slice(1, end);
    const rest = authority.slice(end + 1);
    if (rest !== '' && !rest.startsWith(':')) return undefined;
    portText = rest === '' ? undefined : rest.slice(1);
    if (isIP(host) !== 6) return undefined;
  } else {
    const colon = authority.lastIndexOf(':');
    host = colon < 0 ? authority : authority.slice(0, colon);
    portText = colon < 0 ? undefined : authority.slice(colon + 1);
    host = host.toLowerCase();
    if (isIP(host) === 0 && !NAME.test(host)) return undefined;
  }
  const port = portText === undefined ? defaultPort : /^\d{1,5}$/.test(portText) ? Number(portText) : NaN;
  if (!Number.isInteger(port) || port < 1 || port > 65535) return undefined;
  return { host: host.endsWith('.') ? host.slice(0, -1) : host, port };
}

/** The request's destination: the absolute-form target's authority when the client sent one, else Host. */
export function requestDestination(url: string, host: string | undefined, defaultPort: number): Destination | undefined {
  if (url.startsWith('http://') || url.startsWith('https://')) {
    const start = url.indexOf('//') + 2;
    const end = url.slice(start).search(/[/?#]/);
    const authority = end < 0 ? url.slice(start) : url.slice(start, start + end);
    const tls = url.startsWith('https://');
    const found = parseAuthority(authority, tls ? 443 : 80);
    return found && tls ? { ...found, tls } : found;
  }
  return parseAuthority(host, defaultPort);
}
