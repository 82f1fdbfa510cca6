import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { Namer } from './naming.ts';

describe('Namer', () => {
  const cases = [
    { name: 'Conditional with several targets prefixes', targets: ['a', 'b'], mode: 'Conditional' as const, prefix: true },
    { name: 'Conditional with one target does not', targets: ['a'], mode: 'Conditional' as const, prefix: false },
    { name: 'Always prefixes one target', targets: ['a'], mode: 'Always' as const, prefix: true },
    { name: 'Never never prefixes', targets: ['a', 'b'], mode: 'Never' as const, prefix: false },
  ];
  for (const c of cases) {
    it(c.name, () => {
      const namer = new Namer(c.targets, c.mode);
      assert.equal(namer.prefixNames, c.prefix);
      assert.equal(namer.exposeName('a', 'echo'), c.prefix ? 'a_echo' : 'echo');
    });
  }

  it('routes a prefixed name to the longest matching target and keeps underscores of the tool', () => {
    const namer = new Namer(['db', 'db-admin'], 'Always');
    assert.deepEqual(namer.routeName('db_run_query'), { target: 'db', value: 'run_query' });
    assert.deepEqual(namer.routeName('db-admin_drop'), { target: 'db-admin', value: 'drop' });
    assert.equal(namer.routeName('other_tool'), undefined);
    assert.equal(namer.routeName('db_'), undefined);
  });

  it('resource URIs are always prefixed and route back exactly', () => {
    const namer = new Namer(['files'], 'Never');
    const exposed = namer.exposeUri('files', 'file:///a+b.txt');
    assert.equal(exposed, 'files+file:///a+b.txt');
    assert.deepEqual(namer.routeUri(exposed), { target: 'files', value: 'file:///a+b.txt' });
    assert.equal(namer.routeUri('other+file:///x'), undefined);
    assert.equal(namer.routeUri('file:///x'), undefined);
  });
});
