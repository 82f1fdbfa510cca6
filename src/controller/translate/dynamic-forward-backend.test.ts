import { test } from 'node:test';
import assert from 'node:assert/strict';
import { translateDynamicForward } from './dynamic-forward-backend.ts';

const rows: readonly { name: string; spec: Record<string, unknown>; ok: boolean; message?: RegExp }[] = [
  { name: 'no access control is refused, saying why', spec: { dynamicForwardProxy: {} }, ok: false, message: /accessControl\.allowedHosts is required: a forward proxy can reach arbitrary destinations/ },
  { name: 'an empty allow list is refused', spec: { dynamicForwardProxy: { accessControl: { allowedHosts: [] } } }, ok: false, message: /is required/ },
  { name: 'an explicit star is accepted', spec: { dynamicForwardProxy: { accessControl: { allowedHosts: ['*'] } } }, ok: true },
  { name: 'names, wildcards and IPs are accepted', spec: { dynamicForwardProxy: { accessControl: { allowedHosts: ['Api.Example.com', '*.partner.example', '10.0.0.1'] } } }, ok: true },
  { name: 'a URL is not a host', spec: { dynamicForwardProxy: { accessControl: { allowedHosts: ['http://a.example/'] } } }, ok: false, message: /allowedHosts\[0\]/ },
  { name: 'a mid-name wildcard is refused', spec: { dynamicForwardProxy: { accessControl: { allowedHosts: ['a.*.example'] } } }, ok: false, message: /allowedHosts\[0\]/ },
  { name: 'an unknown address class is refused', spec: { dynamicForwardProxy: { accessControl: { allowedHosts: ['*'], allowAddressClasses: ['private'] } } }, ok: false, message: /allowAddressClasses\[0\] must be one of/ },
  { name: 'inline backend policies are accepted (applied like a ProxyPolicy backend)', spec: { dynamicForwardProxy: { accessControl: { allowedHosts: ['*'] } }, policies: { tls: {} } }, ok: true },
];

for (const row of rows) {
  test(`translateDynamicForward: ${row.name}`, () => {
    const got = translateDynamicForward(row.spec, 3);
    assert.equal(got.ir !== undefined, row.ok);
    assert.equal(got.conditions[0].status, row.ok ? 'True' : 'False');
    if (row.message) assert.match(got.conditions[0].message, row.message);
  });
}

test('translateDynamicForward: names are lower-cased and classes kept', () => {
  const got = translateDynamicForward({ dynamicForwardProxy: { accessControl: { allowedHosts: ['Api.Example.com'], allowAddressClasses: ['loopback'] } } }, undefined);
  assert.deepEqual(got.ir, { allowedHosts: ['api.example.com'], allowAddressClasses: ['loopback'] });
});
