import { test } from 'node:test';
import assert from 'node:assert/strict';
import { CheckedResolver, type Lookup } from './resolver.ts';

function fakeDns(answers: Record<string, string[]>): { lookup: Lookup; calls: string[] } {
  const calls: string[] = [];
  return {
    calls,
    lookup: async (host) => {
      calls.push(host);
      const found = answers[host];
      if (!found) throw new Error('ENOTFOUND');
      return found;
    },
  };
}

test('a public name resolves to its first address', async () => {
  const dns = fakeDns({ 'a.example': ['93.184.216.34'] });
  const r = new CheckedResolver({ lookup: dns.lookup });
  assert.deepEqual(await r.resolve('a.example', new Set()), { ok: true, address: '93.184.216.34' });
});

test('a name resolving to loopback is refused (the resolved address is checked, not the name)', async () => {
  const r = new CheckedResolver({ lookup: fakeDns({ 'rebind.example': ['127.0.0.1'] }).lookup });
  const got = await r.resolve('rebind.example', new Set());
  assert.equal(got.ok, false);
  assert.equal(!got.ok && got.reason, 'blocked');
});

test('a mixed answer with one metadata address is refused as a whole', async () => {
  const r = new CheckedResolver({ lookup: fakeDns({ 'mixed.example': ['93.184.216.34', '169.254.169.254'] }).lookup });
  const got = await r.resolve('mixed.example', new Set());
  assert.equal(!got.ok && got.reason, 'blocked');
});

test('an allowed class passes; IP literals skip DNS but are checked', async () => {
  const dns = fakeDns({ 'local.example': ['127.0.0.1'] });
  const r = new CheckedResolver({ lookup: dns.lookup });
  assert.deepEqual(await r.resolve('local.example', new Set(['loopback'])), { ok: true, address: '127.0.0.1' });
  assert.equal((await r.resolve('169.254.169.254', new Set())).ok, false);
  assert.equal((await r.resolve('fd00:ec2::254', new Set(['linkLocal']))).ok, false);
  assert.deepEqual(dns.calls, ['local.example']);
});

test('an unresolvable name is refused and not cached', async () => {
  const dns = fakeDns({});
  const r = new CheckedResolver({ lookup: dns.lookup });
  const got = await r.resolve('nowhere.example', new Set());
  assert.equal(!got.ok && got.reason, 'unresolved');
  await new Promise((resolve) => setImmediate(resolve));
  assert.equal(r.size, 0);
});

test('answers are cached for the TTL, then asked again', async () => {
  let now = 0;
  const dns = fakeDns({ 'a.example': ['93.184.216.34'] });
  const r = new CheckedResolver({ lookup: dns.lookup, ttlMs: 1000, now: () => now });
  await r.resolve('a.example', new Set());
  await r.resolve('a.example', new Set());
  assert.equal(dns.calls.length, 1);
  now = 1001;
  await r.resolve('a.example', new Set());
  assert.equal(dns.calls.length, 2);
});

test('the cache holds at most maxEntries names, evicting the least recently used', async () => {
  const dns = fakeDns({ 'a.example': ['8.8.8.8'], 'b.example': ['8.8.4.4'], 'c.example': ['1.1.1.1'] });
  const r = new CheckedResolver({ lookup: dns.lookup, maxEntries: 2 });
  await r.resolve('a.example', new Set());
  await r.resolve('b.example', new Set());
  await r.resolve('a.example', new Set()); // a is now the most recent
  await r.resolve('c.example', new Set()); // evicts b
  assert.equal(r.size, 2);
  await r.resolve('a.example', new Set());
  assert.deepEqual(dns.calls, ['a.example', 'b.example', 'c.example']);
  await r.resolve('b.example', new Set());
  assert.deepEqual(dns.calls, ['a.example', 'b.example', 'c.example', 'b.example']);
});
