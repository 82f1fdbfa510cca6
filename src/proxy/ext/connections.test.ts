import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { connectionKey, SharedConnections, SharedPool, TargetAgents } from './connections.ts';

describe('SharedPool', () => {
  it('creates once per key, destroys on the last release, and a second close of one lease is a no-op', () => {
    const destroyed: string[] = [];
    let created = 0;
    const pool = new SharedPool<string>((v) => destroyed.push(v));
    const a = pool.acquire('k', () => `v${++created}`);
    const b = pool.acquire('k', () => `v${++created}`);
    assert.equal(a.value, 'v1');
    assert.equal(b.value, 'v1', 'the second lease shares the first resource');
    a.close();
    a.close();
    assert.deepEqual(destroyed, [], 'b still holds it');
    b.close();
    assert.deepEqual(destroyed, ['v1']);
    assert.equal(pool.acquire('k', () => `v${++created}`).value, 'v2', 'a key in use again gets a new resource');
  });

  it('closeAll destroys leased resources; their late release does not destroy twice', () => {
    const destroyed: string[] = [];
    const pool = new SharedPool<string>((v) => destroyed.push(v));
    const lease = pool.acquire('x', () => 'x');
    pool.closeAll();
    lease.close();
    assert.deepEqual(destroyed, ['x']);
  });
});

describe('connectionKey', () => {
  const cases: { name: string; a: Parameters<typeof connectionKey>[0]; b: Parameters<typeof connectionKey>[0]; same: boolean }[] = [
    { name: 'path prefix does not matter', a: { host: 'h', port: 1, pathPrefix: '/a' }, b: { host: 'h', port: 1 }, same: true },
    { name: 'port matters', a: { host: 'h', port: 1 }, b: { host: 'h', port: 2 }, same: false },
    { name: 'TLS matters', a: { host: 'h', port: 1, tls: true }, b: { host: 'h', port: 1 }, same: false },
    { name: 'TLS options matter', a: { host: 'h', port: 1, tls: { servername: 'a' } }, b: { host: 'h', port: 1, tls: { servername: 'b' } }, same: false },
  ];
  for (const c of cases) it(c.name, () => assert.equal(connectionKey(c.a) === connectionKey(c.b), c.same));
});

describe('SharedConnections', () => {
  it('one gRPC channel per endpoint while leased, none after', () => {
    const shared = new SharedConnections();
    const a = shared.grpc({ host: '127.0.0.1', port: 1 });
    const b = shared.grpc({ host: '127.0.0.1', port: 1 });
    const c = shared.grpc({ host: '127.0.0.1', port: 2 });
    assert.equal(a.transport, b.transport);
    assert.deepEqual(shared.open, { grpc: 2, http: 0 });
    a.close();
    c.close();
    assert.deepEqual(shared.open, { grpc: 1, http: 0 });
    b.close();
    assert.deepEqual(shared.open, { grpc: 0, http: 0 });
  });
});

describe('TargetAgents: HTTP pools for each target of an external service', () => {
  it('one lease per endpoint and settings; an equal target (a newer config\'s object) shares it; close gives them all back', () => {
    const shared = new SharedConnections();
    const a = { host: '10.0.0.1', port: 9000 };
    const b = { host: '10.0.0.2', port: 9000 };
    const agents = new TargetAgents([a, b], shared);
    assert.equal(shared.open.http, 2);
    agents.get({ ...a, settings: 'f1' });
    assert.equal(shared.open.http, 3, 'another Service policy (settings fingerprint): its own pool');
    agents.close();
    assert.equal(shared.open.http, 0);
    shared.closeAll();
  });

  it('without shared connections, its own pools by endpoint and settings', () => {
    const a = { host: '10.0.0.1', port: 9000 };
    const agents = new TargetAgents([a]);
    assert.equal(agents.get({ ...a }), agents.get(a), 'the same endpoint and settings (a newer config\'s target object): the same pool');
    assert.notEqual(agents.get({ ...a, settings: 'f1' }), agents.get(a));
    agents.close();
  });
});
