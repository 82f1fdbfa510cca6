import { test } from 'node:test';
import assert from 'node:assert/strict';
import { addressClass, refusedAddress, type AddressClass } from './address-classes.ts';

const rows: readonly { name: string; address: string; want: AddressClass | undefined }[] = [
  { name: 'public IPv4', address: '93.184.216.34', want: undefined },
  { name: 'private IPv4 is not a blocked class', address: '10.1.2.3', want: undefined },
  { name: 'loopback IPv4', address: '127.0.0.1', want: 'loopback' },
  { name: 'loopback IPv4 anywhere in 127/8', address: '127.9.8.7', want: 'loopback' },
  { name: 'loopback IPv6', address: '::1', want: 'loopback' },
  { name: 'IPv4-mapped loopback', address: '::ffff:127.0.0.1', want: 'loopback' },
  { name: 'IPv4-mapped loopback in hex', address: '::ffff:7f00:1', want: 'loopback' },
  { name: 'link-local IPv4', address: '169.254.1.1', want: 'linkLocal' },
  { name: 'link-local IPv6', address: 'fe80::1', want: 'linkLocal' },
  { name: 'metadata IPv4', address: '169.254.169.254', want: 'metadata' },
  { name: 'metadata IPv4-mapped', address: '::ffff:169.254.169.254', want: 'metadata' },
  { name: 'metadata AWS IPv6', address: 'fd00:ec2::254', want: 'metadata' },
  { name: 'metadata ECS', address: '169.254.170.2', want: 'metadata' },
  { name: 'metadata Alibaba', address: '100.100.100.200', want: 'metadata' },
  { name: 'unspecified IPv4', address: '0.0.0.0', want: 'unspecified' },
  { name: 'unspecified IPv6', address: '::', want: 'unspecified' },
  { name: 'not an IP fails closed', address: 'example.com', want: 'unspecified' },
];

for (const row of rows) {
  test(`addressClass: ${row.name}`, () => assert.equal(addressClass(row.address), row.want));
}

test('refusedAddress: an allowed class passes, metadata stays refused when only link-local is allowed', () => {
  assert.equal(refusedAddress('127.0.0.1', new Set(['loopback'])), undefined);
  assert.equal(refusedAddress('127.0.0.1', new Set()), 'loopback');
  assert.equal(refusedAddress('169.254.169.254', new Set(['linkLocal'])), 'metadata');
  assert.equal(refusedAddress('8.8.8.8', new Set()), undefined);
});
