import { isIPv4, isIPv6 } from 'node:net';

/**
 * IP addresses and CIDR prefixes as the Kubernetes CEL network library models them (net.IP,
 * net.CIDR). Addresses are kept as bytes so containment is a prefix comparison; strings are
 * canonical (RFC 5952 for IPv6).
 */

export class IPAddress {
  readonly bytes: Uint8Array;
  constructor(bytes: Uint8Array) {
    this.bytes = bytes;
  }
  get family(): 4 | 6 {
    return this.bytes.length === 4 ? 4 : 6;
  }
  toString(): string {
    return this.family === 4 ? this.bytes.join('.') : formatV6(this.bytes);
  }
  equals(other: IPAddress): boolean {
    return this.bytes.length === other.bytes.length && this.bytes.every((b, i) => b === other.bytes[i]);
  }
  isUnspecified(): boolean {
    return this.bytes.every((b) => b === 0);
  }
  isLoopback(): boolean {
    if (this.family === 4) return this.bytes[0] === 127;
    return this.bytes.every((b, i) => b === (i === 15 ? 1 : 0));
  }
  isMulticast(): boolean {
    return this.family === 4 ? (this.bytes[0] & 0xf0) === 0xe0 : this.bytes[0] === 0xff;
  }
  isLinkLocalMulticast(): boolean {
    if (this.family === 4) return this.bytes[0] === 224 && this.bytes[1] === 0 && this.bytes[2] === 0;
    return this.bytes[0] === 0xff && (this.bytes[1] & 0x0f) === 0x02;
  }
  isLinkLocalUnicast(): boolean {
    if (this.family === 4) return this.bytes[0] === 169 && this.bytes[1] === 254;
    return this.bytes[0] === 0xfe && (this.bytes[1] & 0xc0) === 0x80;
  }
  /** Go's net.IP.IsGlobalUnicast, which the Kubernetes library uses. */
  isGlobalUnicast(): boolean {
    const broadcast = this.family === 4 && this.bytes.every((b) => b === 255);
    return !broadcast && !this.isUnspecified() && !this.isLoopback() && !this.isMulticast() && !this.isLinkLocalUnicast();
  }
}

export class CIDRPrefix {
  readonly address: IPAddress;
  readonly prefixLength: number;
  constructor(address: IPAddress, prefixLength: number) {
    this.address = address;
    this.prefixLength = prefixLength;
  }
  toString(): string {
    return `${this.address.toString()}/${this.prefixLength}`;
  }
  containsIP(ip: IPAddress): boolean {
    return ip.family === this.address.family && samePrefix(ip.bytes, this.address.bytes, this.prefixLength);
  }
  containsCIDR(other: CIDRPrefix): boolean {
    return other.prefixLength >= this.prefixLength && this.containsIP(other.address);
  }
  masked(): CIDRPrefix {
    const bytes = this.address.bytes.map((b, i) => b & byteMask(this.prefixLength, i));
    return new CIDRPrefix(new IPAddress(bytes), this.prefixLength);
  }
  equals(other: CIDRPrefix): boolean {
    return this.prefixLength === other.prefixLength && this.address.equals(other.address);
  }
}

function byteMask(prefixLength: number, byteIndex: number): number {
  const bits = Math.min(8, Math.max(0, prefixLength - byteIndex * 8));
  return (0xff << (8 - bits)) & 0xff;
}

function samePrefix(a: Uint8Array, b: Uint8Array, prefixLength: number): boolean {
  for (let i = 0; i < a.length; i++) {
    const mask = byteMask(prefixLength, i);
    if (mask === 0) return true;
    if ((a[i] & mask) !== (b[i] & mask)) return false;
  }
  return true;
}

/**
 * Parses an IPv4 or IPv6 address. Rejects zones (`%eth0`) and IPv4 octets with leading zeros, as
 * the Kubernetes library does. An IPv4-mapped IPv6 address (`::ffff:10.0.0.1`, what a dual-stack
 * socket reports for IPv4 peers) becomes the IPv4 address, so `source.address` matches IPv4 CIDRs.
 */
export function parseIP(text: string): IPAddress | undefined {
  if (isIPv4(text)) return parseV4(text);
  if (!isIPv6(text) || text.includes('%')) return undefined;
  const bytes = parseV6(text);
  if (bytes === undefined) return undefined;
  const mapped = bytes.slice(0, 10).every((b) => b === 0) && bytes[10] === 0xff && bytes[11] === 0xff;
  return new IPAddress(mapped ? bytes.slice(12) : bytes);
}

export function parseCIDR(text: string): CIDRPrefix | undefined {
  const slash = text.indexOf('/');
  if (slash < 0) return undefined;
  const address = parseIP(text.slice(0, slash));
  const lengthText = text.slice(slash + 1);
  if (address === undefined || !/^(0|[1-9][0-9]{0,2})$/.test(lengthText)) return undefined;
  const prefixLength = Number(lengthText);
  if (prefixLength > address.bytes.length * 8) return undefined;
  return new CIDRPrefix(address, prefixLength);
}

function parseV4(text: string): IPAddress | undefined {
  const parts = text.split('.');
  if (parts.some((p) => p.length > 1 && p.startsWith('0'))) return undefined;
  return new IPAddress(Uint8Array.from(parts, Number));
}

function parseV6(text: string): Uint8Array | undefined {
  const halves = text.split('::');
  const parseGroups = (part: string): number[] | undefined => {
    if (part === '') return [];
    const out: number[] = [];
    for (const g of part.split(':')) {
      if (g.includes('.')) {
        const v4 = parseV4(g);
        if (v4 === undefined) return undefined;
        out.push((v4.bytes[0] << 8) | v4.bytes[1], (v4.bytes[2] << 8) | v4.bytes[3]);
      } else out.push(parseInt(g, 16));
    }
    return out;
  };
  const head = parseGroups(halves[0]);
  const tail = halves.length > 1 ? parseGroups(halves[1]) : [];
  if (head === undefined || tail === undefined) return undefined;
  const groups = halves.length > 1 ? [...head, ...new Array<number>(8 - head.length - tail.length).fill(0), ...tail] : head;
  if (groups.length !== 8) return undefined;
  const bytes = new Uint8Array(16);
  groups.forEach((g, i) => {
    bytes[2 * i] = g >> 8;
    bytes[2 * i + 1] = g & 0xff;
  });
  return bytes;
}

/** RFC 5952: lower case, no leading zeros, the longest run (>= 2) of zero groups becomes `::`. */
function formatV6(bytes: Uint8Array): string {
  const groups: number[] = [];
  for (let i = 0; i < 16; i += 2) groups.push((bytes[i] << 8) | bytes[i + 1]);
  let bestStart = -1;
  let bestLength = 1;
  for (let i = 0; i < 8; ) {
    if (groups[i] !== 0) {
      i++;
      continue;
    }
    let j = i;
    while (j < 8 && groups[j] === 0) j++;
    if (j - i > bestLength) {
      bestStart = i;
      bestLength = j - i;
    }
    i = j;
  }
  const hex = groups.map((g) => g.toString(16));
  if (bestStart < 0) return hex.join(':');
  return `${hex.slice(0, bestStart).join(':')}::${hex.slice(bestStart + bestLength).join(':')}`;
}
