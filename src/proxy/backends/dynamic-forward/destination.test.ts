import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseAuthority, requestDestination } from './destination.ts';

const rows: readonly { name: string; authority: string | undefined; want: { host: string; port: number } | undefined }[] = [
  { name: 'name without port takes the default', authority: 'example.com', want: { host: 'example.com', port: 80 } },
  { name: 'name with port', authority: 'Example.COM:8080', want: { host: 'example.com', port: 8080 } },
  { name: 'trailing dot dropped', authority: 'example.com.', want: { host: 'example.com', port: 80 } },
  { name: 'IPv4 literal', authority: '10.0.0.1:81', want: { host: '10.0.0.1', port: 81 } },
  { name: 'IPv6 literal', authority: '[::1]:9000', want: { host: '::1', port: 9000 } },
  { name: 'IPv6 literal without port', authority: '[fd00:ec2::254]', want: { host: 'fd00:ec2::254', port: 80 } },
  { name: 'missing', authority: undefined, want: undefined },
  { name: 'empty', authority: '', want: undefined },
  { name: 'user info refused', authority: 'user@evil.example', want: undefined },
  { name: 'path refused', authority: 'a.example/b', want: undefined },
  { name: 'port zero refused', authority: 'a.example:0', want: undefined },
  { name: 'port too large refused', authority: 'a.example:65536', want: undefined },
  { name: 'non-numeric port refused', authority: 'a.example:http', want: undefined },
  { name: 'bare IPv6 without brackets refused', authority: '::1', want: undefined },
  { name: 'bracketed non-IPv6 refused', authority: '[example.com]:80', want: undefined },
];

for (const row of rows) {
  test(`parseAuthority: ${row.name}`, () => assert.deepEqual(parseAuthority(row.authority, 80), row.want));
}

test('requestDestination: the absolute-form target wins over Host, with the scheme default port', () => {
  assert.deepEqual(requestDestination('http://a.example/x?y', 'b.example', 80), { host: 'a.example', port: 80 });
  assert.deepEqual(requestDestination('https://a.example', undefined, 80), { host: 'a.example', port: 443, tls: true });
  assert.deepEqual(requestDestination('/x', 'b.example:8443', 443), { host: 'b.example', port: 8443 });
});
