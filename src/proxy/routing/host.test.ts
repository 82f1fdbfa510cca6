import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { HostTable, normalizeHost } from './host.ts';

describe('normalizeHost', () => {
  const cases = [
    { name: 'lowercases and drops the port', input: 'API.Example.com:8080', want: 'api.example.com' },
    { name: 'drops a trailing dot', input: 'example.com.', want: 'example.com' },
    { name: 'unwraps IPv6 literals', input: '[::1]:443', want: '::1' },
    { name: 'empty for a missing host', input: undefined, want: '' },
  ];
  for (const c of cases) it(c.name, () => assert.equal(normalizeHost(c.input), c.want));
});

describe('HostTable', () => {
  const table = new HostTable<string>([
    [null, 'any'],
    ['*.example.com', 'wild'],
    ['*.api.example.com', 'wild-api'],
    ['foo.example.com', 'exact'],
  ]);
  const cases = [
    { name: 'exact beats wildcard', host: 'foo.example.com', want: 'exact', all: ['exact', 'wild', 'any'] },
    { name: 'longer wildcard beats shorter', host: 'x.api.example.com', want: 'wild-api', all: ['wild-api', 'wild', 'any'] },
    { name: 'wildcard spans several labels', host: 'a.b.example.com', want: 'wild', all: ['wild', 'any'] },
    { name: 'wildcard never matches its own suffix', host: 'example.com', want: 'any', all: ['any'] },
    { name: 'catch-all for unknown hosts', host: 'other.org', want: 'any', all: ['any'] },
  ];
  for (const c of cases) {
    it(c.name, () => {
      assert.equal(table.lookup(c.host), c.want);
      assert.deepEqual(table.lookupAll(c.host), c.all);
    });
  }

  it('has no answer without a catch-all', () => {
    assert.equal(new HostTable([['a.com', 1]]).lookup('b.com'), undefined);
  });

  it('keeps the first entry for a repeated hostname', () => {
    assert.equal(new HostTable([['a.com', 1], ['A.com', 2]]).lookup('a.com'), 1);
  });
});
