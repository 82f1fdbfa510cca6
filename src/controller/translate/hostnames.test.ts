import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { effectiveHostnames, hostnameSpecificity, intersectHostname } from './hostnames.ts';

describe('intersectHostname', () => {
  const cases: { name: string; listener: string | null; route: string; want: string | null }[] = [
    { name: 'no listener hostname takes the route hostname', listener: null, route: 'a.example.com', want: 'a.example.com' },
    { name: 'equal exact names', listener: 'a.example.com', route: 'a.example.com', want: 'a.example.com' },
    { name: 'different exact names', listener: 'a.example.com', route: 'b.example.com', want: null },
    { name: 'listener wildcard covers route name', listener: '*.example.com', route: 'a.example.com', want: 'a.example.com' },
    { name: 'listener wildcard covers deeper names', listener: '*.example.com', route: 'a.b.example.com', want: 'a.b.example.com' },
    { name: 'wildcard does not cover its own suffix', listener: '*.example.com', route: 'example.com', want: null },
    { name: 'route wildcard covers listener name', listener: 'a.example.com', route: '*.example.com', want: 'a.example.com' },
    { name: 'route wildcard does not cover the bare suffix', listener: 'example.com', route: '*.example.com', want: null },
    { name: 'narrower route wildcard wins', listener: '*.example.com', route: '*.a.example.com', want: '*.a.example.com' },
    { name: 'narrower listener wildcard wins', listener: '*.a.example.com', route: '*.example.com', want: '*.a.example.com' },
    { name: 'equal wildcards', listener: '*.example.com', route: '*.example.com', want: '*.example.com' },
    { name: 'unrelated wildcards', listener: '*.example.com', route: '*.example.org', want: null },
    { name: 'suffix must align on a label', listener: '*.example.com', route: 'aexample.com', want: null },
  ];
  for (const c of cases) it(c.name, () => assert.equal(intersectHostname(c.listener, c.route), c.want));
});

describe('effectiveHostnames', () => {
  it('no route hostnames means every host the listener accepts', () => assert.deepEqual(effectiveHostnames('a.example.com', []), []));
  it('keeps the intersecting names, sorted and unique', () =>
    assert.deepEqual(effectiveHostnames('*.example.com', ['b.example.com', 'a.example.com', 'x.org', 'a.example.com']), ['a.example.com', 'b.example.com']));
  it('null when nothing intersects', () => assert.equal(effectiveHostnames('a.example.com', ['b.example.com']), null));
});

describe('hostnameSpecificity', () => {
  it('orders exact, longer wildcard, shorter wildcard, then none', () => {
    const sorted = [null, '*.example.com', 'a.example.com', '*.a.example.com'].sort(hostnameSpecificity);
    assert.deepEqual(sorted, ['a.example.com', '*.a.example.com', '*.example.com', null]);
  });
});
