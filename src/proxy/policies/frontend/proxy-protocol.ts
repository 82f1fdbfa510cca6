/**
 * The PROXY protocol header (HAProxy's spec, versions 1 and 2) that a load balancer in front of
 * the gateway prepends to each connection to carry the real client address. Parsing is
 * incremental: feed what arrived so far and get `incomplete` until a decision is possible.
 */

export interface ProxiedAddress {
  readonly address: string;
  readonly port: number;
}

export type ProxyHeaderResult =
  /** More bytes are needed to decide. */
  | { readonly kind: 'incomplete' }
  /** A header of `length` bytes; `source` absent for LOCAL/UNKNOWN (health checks): keep the peer address. */
  | { readonly kind: 'header'; readonly length: number; readonly source?: ProxiedAddress }
  /** The bytes do not start with a PROXY header (plain traffic, or garbage). */
  | { readonly kind: 'absent' }
  | { readonly kind: 'invalid'; readonly reason: string };

export type ProxyProtocolVersion = 'V1' | 'V2' | 'All';

export const V2_SIGNATURE = Buffer.from([0x0d, 0x0a, 0x0d, 0x0a, 0x00, 0x0d, 0x0a, 0x51, 0x55, 0x49, 0x54, 0x0a]);
const V1_PREFIX = Buffer.from('PROXY ', 'latin1');
/** The v1 spec: a header line is at most 107 bytes including CRLF. */
const V1_MAX_LENGTH = 107;
const V2_FIXED_LENGTH = 16;

export function parseProxyHeader(data: Buffer, accept: ProxyProtocolVersion): ProxyHeaderResult {
  const v2 = accept !== 'V1' ? matchPrefix(data, V2_SIGNATURE) : false;
  if (v2 === 'partial') return { kind: 'incomplete' };
  if (v2 === true) return parseV2(data);
  const v1 = accept !== 'V2' ? matchPrefix(data, V1_PREFIX) : false;
  if (v1 === 'partial') return { kind: 'incomplete' };
  if (v1 === true) return parseV1(data);
  return { kind: 'absent' };
}

/** true: data starts with prefix; 'partial': data is a proper prefix of it; false: differs. */
function matchPrefix(data: Buffer, prefix: Buffer): boolean | 'partial' {
  const n = Math.min(data.length, prefix.length);
  if (!data.subarray(0, n).equals(prefix.subarray(0, n))) return false;
  return n < prefix.length ? 'partial' : true;
}

function parseV1(data: Buffer): ProxyHeaderResult {
  const end = data.subarray(0, V1_MAX_LENGTH).indexOf('\r\n');
  if (end < 0) return data.length >= V1_MAX_LENGTH ? { kind: 'invalid', reason: 'PROXY v1 line too long' } : { kind: 'incomplete' };
  const parts = data.subarray(0, end).toString('latin1').split(' ');
  const length = end + 2;
  if (parts[1] === 'UNKNOWN') return { kind: 'header', length };
  if (parts.length !== 6 || (parts[1] !== 'TCP4' && parts[1] !== 'TCP6')) return { kind: 'invalid', reason: 'malformed PROXY v1 line' };
  const port = Number(parts[4]);
  if (!Number.isInteger(port) || port < 0 || port > 65535 || !/^[\d.]+$|:/.test(parts[2])) return { kind: 'invalid', reason: 'malformed PROXY v1 address' };
  return { kind: 'header', length, source: { address: parts[2], port } };
}

function parseV2(data: Buffer): ProxyHeaderResult {
  if (data.length < V2_FIXED_LENGTH) return { kind: 'incomplete' };
  const versionCommand = data[12];
  if (versionCommand >> 4 !== 2) return { kind: 'invalid', reason: 'unsupported PROXY v2 version' };
  const length = V2_FIXED_LENGTH + data.readUInt16BE(14);
  if (data.length < length) return { kind: 'incomplete' };
  const command = versionCommand & 0x0f;
  if (command === 0x0) return { kind: 'header', length }; // LOCAL: the proxy's own connection
  if (command !== 0x1) return { kind: 'invalid', reason: 'unknown PROXY v2 command' };
  const family = data[13] >> 4;
  const body = data.subarray(V2_FIXED_LENGTH, length);
  if (family === 0x1 && body.length >= 12) {
    return { kind: 'header', length, source: { address: [...body.subarray(0, 4)].join('.'), port: body.readUInt16BE(8) } };
  }
  if (family === 0x2 && body.length >= 36) {
    const groups: string[] = [];
    for (let i = 0; i < 16; i += 2) groups.push(body.readUInt16BE(i).toString(16));
    return { kind: 'header', length, source: { address: compressIpv6(groups), port: body.readUInt16BE(32) } };
  }
  // AF_UNSPEC or AF_UNIX: nothing usable as a client address.
  return { kind: 'header', length };
}

/** The canonical text form (RFC 5952): the longest run of zero groups becomes `::`. */
function compressIpv6(groups: string[]): string {
  let best = -1;
  let bestLength = 1;
  for (let i = 0; i < groups.length;) {
    if (groups[i] !== '0') {
      i++;
      continue;
    }
    let j = i;
    while (j < groups.length && groups[j] === '0') j++;
    if (j - i > bestLength) {
      best = i;
      bestLength = j - i;
    }
    i = j;
  }
  if (best < 0) return groups.join(':');
  return `${groups.slice(0, best).join(':')}::${groups.slice(best + bestLength).join(':')}`;
}
