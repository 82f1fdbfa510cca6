import type { Environment } from '@marcbachmann/cel-js';
import { celError } from '../cel-internals.ts';
import { memoize } from '../bounded-cache.ts';
import { CIDRPrefix, IPAddress, parseCIDR as parseCIDRText, parseIP as parseIPText } from '../ip-address.ts';

/**
 * The Kubernetes CEL network library (`ip`, `isIP`, `cidr`, `isCIDR` and the `net.IP` /
 * `net.CIDR` methods), so expressions users already write for Kubernetes validation carry over,
 * e.g. `cidr("10.0.0.0/8").containsIP(source.address)`.
 */

// Literal CIDRs are parsed on every evaluation and client addresses repeat; parsing dominates the
// cost of a network check without these memos. Parsed values are immutable, so sharing is safe.
const parseIP = memoize(4096, parseIPText);
const parseCIDR = memoize(1024, parseCIDRText);

function ipOrFail(text: string): IPAddress {
  const ip = parseIP(text);
  if (ip === undefined) throw celError('invalid_argument', `IP address ${JSON.stringify(text)} is not valid`);
  return ip;
}

function cidrOrFail(text: string): CIDRPrefix {
  const cidr = parseCIDR(text);
  if (cidr === undefined) throw celError('invalid_argument', `network address ${JSON.stringify(text)} is not a valid CIDR`);
  return cidr;
}

export function registerNetworkFunctions(env: Environment): void {
  env.registerType('net.IP', IPAddress);
  env.registerType('net.CIDR', CIDRPrefix);

  env.registerFunction('isIP(string): bool', (s: string) => parseIP(s) !== undefined, {
    description: 'True when the string is an IPv4 or IPv6 address.',
  });
  env.registerFunction('ip(string): net.IP', ipOrFail, { description: 'Parses an IPv4 or IPv6 address.' });
  env.registerFunction('string(net.IP): string', (ip: IPAddress) => ip.toString());
  env.registerFunction('net.IP.family(): int', (ip: IPAddress) => BigInt(ip.family));
  env.registerFunction('net.IP.isUnspecified(): bool', (ip: IPAddress) => ip.isUnspecified());
  env.registerFunction('net.IP.isLoopback(): bool', (ip: IPAddress) => ip.isLoopback());
  env.registerFunction('net.IP.isLinkLocalMulticast(): bool', (ip: IPAddress) => ip.isLinkLocalMulticast());
  env.registerFunction('net.IP.isLinkLocalUnicast(): bool', (ip: IPAddress) => ip.isLinkLocalUnicast());
  env.registerFunction('net.IP.isGlobalUnicast(): bool', (ip: IPAddress) => ip.isGlobalUnicast());
  env.registerOperator('net.IP == net.IP', (a: IPAddress, b: IPAddress) => a.equals(b));

  env.registerFunction('isCIDR(string): bool', (s: string) => parseCIDR(s) !== undefined, {
    description: 'True when the string is an address/prefix-length pair such as 10.0.0.0/8.',
  });
  env.registerFunction('cidr(string): net.CIDR', cidrOrFail, { description: 'Parses a CIDR such as 10.0.0.0/8.' });
  env.registerFunction('string(net.CIDR): string', (c: CIDRPrefix) => c.toString());
  env.registerFunction('net.CIDR.containsIP(net.IP): bool', (c: CIDRPrefix, ip: IPAddress) => c.containsIP(ip));
  // A string that is not an address is simply not contained: source.address may be a Unix socket path.
  env.registerFunction('net.CIDR.containsIP(string): bool', (c: CIDRPrefix, s: string) => {
    const ip = parseIP(s);
    return ip !== undefined && c.containsIP(ip);
  });
  env.registerFunction('net.CIDR.containsCIDR(net.CIDR): bool', (c: CIDRPrefix, o: CIDRPrefix) => c.containsCIDR(o));
  env.registerFunction('net.CIDR.containsCIDR(string): bool', (c: CIDRPrefix, s: string) => c.containsCIDR(cidrOrFail(s)));
  env.registerFunction('net.CIDR.ip(): net.IP', (c: CIDRPrefix) => c.address);
  env.registerFunction('net.CIDR.masked(): net.CIDR', (c: CIDRPrefix) => c.masked());
  env.registerFunction('net.CIDR.prefixLength(): int', (c: CIDRPrefix) => BigInt(c.prefixLength));
  env.registerOperator('net.CIDR == net.CIDR', (a: CIDRPrefix, b: CIDRPrefix) => a.equals(b));
}
