import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parseProxyHeader, V2_SIGNATURE, type ProxyHeaderResult, type ProxyProtocolVersion } from './proxy-protocol.ts';

function v2(command: number, family: number, body: number[]): Buffer {
  return Buffer.concat([V2_SIGNATURE, Buffer.from([0x20 | command, family, body.length >> 8, body.length & 0xff]), Buffer.from(body)]);
}
const ipv6Body = [0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, ...new Array<number>(16).fill(0), 0x1f, 0x90, 0, 80];

const cases: { name: string; data: Buffer; accept?: ProxyProtocolVersion; expect: ProxyHeaderResult }[] = [
  { name: 'v1 TCP4', data: Buffer.from('PROXY TCP4 192.0.2.1 10.0.0.1 1234 80\r\nGET'), expect: { kind: 'header', length: 39, source: { address: '192.0.2.1', port: 1234 } } },
  { name: 'v1 TCP6', data: Buffer.from('PROXY TCP6 2001:db8::1 ::1 1234 443\r\n'), expect: { kind: 'header', length: 37, source: { address: '2001:db8::1', port: 1234 } } },
  { name: 'v1 UNKNOWN keeps the peer address', data: Buffer.from('PROXY UNKNOWN\r\n'), expect: { kind: 'header', length: 15 } },
  { name: 'v1 without CRLF yet', data: Buffer.from('PROXY TCP4 192.0.2.1'), expect: { kind: 'incomplete' } },
  { name: 'v1 line longer than 107 bytes', data: Buffer.from(`PROXY TCP4 ${'1'.repeat(120)}`), expect: { kind: 'invalid', reason: 'PROXY v1 line too long' } },
  { name: 'v1 bad port', data: Buffer.from('PROXY TCP4 192.0.2.1 10.0.0.1 99999 80\r\n'), expect: { kind: 'invalid', reason: 'malformed PROXY v1 address' } },
  { name: 'a prefix of the v1 signature', data: Buffer.from('PRO'), expect: { kind: 'incomplete' } },
  { name: 'plain HTTP', data: Buffer.from('GET / HTTP/1.1\r\n'), expect: { kind: 'absent' } },
  { name: 'v1 not accepted under V2', data: Buffer.from('PROXY UNKNOWN\r\n'), accept: 'V2', expect: { kind: 'absent' } },
  { name: 'v2 TCP over IPv4', data: v2(1, 0x11, [192, 0, 2, 9, 10, 0, 0, 1, 0x30, 0x39, 0, 80]), expect: { kind: 'header', length: 28, source: { address: '192.0.2.9', port: 12345 } } },
  { name: 'v2 TCP over IPv6, compressed', data: v2(1, 0x21, ipv6Body), expect: { kind: 'header', length: 52, source: { address: '2001:db8::1', port: 8080 } } },
  { name: 'v2 LOCAL (health check)', data: v2(0, 0x00, []), expect: { kind: 'header', length: 16 } },
  { name: 'v2 truncated address block', data: v2(1, 0x11, [192, 0, 2, 9]).subarray(0, 18), expect: { kind: 'incomplete' } },
  { name: 'v2 not accepted under V1', data: v2(0, 0x00, []), accept: 'V1', expect: { kind: 'absent' } },
  { name: 'v2 unknown command', data: v2(5, 0x11, []), expect: { kind: 'invalid', reason: 'unknown PROXY v2 command' } },
];

describe('parseProxyHeader', () => {
  for (const c of cases) it(c.name, () => assert.deepEqual(parseProxyHeader(c.data, c.accept ?? 'All'), c.expect));
});
