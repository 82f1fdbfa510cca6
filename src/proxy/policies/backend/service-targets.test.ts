import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Backend } from '../../../ir/types.ts';
import { backendTargets, isPublished, liveTargets, publishBackends } from './service-targets.ts';

const backend = (key: string, endpoints: Backend['endpoints'], extra: Partial<Backend> = {}): Backend => ({ key, kind: 'Service', namespace: 'ns', name: key, endpoints, rewriteHost: false, ...extra });
const TWO = [{ host: '10.0.0.1', port: 9000 }, { host: '10.0.0.2', port: 9000 }];

describe('service targets: a backend named by a policy endpoint', () => {
  it('spreads calls round robin over the ready endpoints, plaintext without a tls policy', () => {
    const targets = backendTargets({ a: backend('a', TWO) }, 'a');
    assert.deepEqual(targets.all.map((t) => `${t.host}:${t.port}`), ['10.0.0.1:9000', '10.0.0.2:9000']);
    assert.deepEqual([targets.next(), targets.next(), targets.next()].map((t) => t.host), ['10.0.0.1', '10.0.0.2', '10.0.0.1']);
    assert.equal(targets.all[0].tls, undefined);
  });

  const refused: { name: string; backends: Record<string, Backend>; error: RegExp }[] = [
    { name: 'not in the config', backends: {}, error: /backend a is not in the config/ },
    { name: 'no ready endpoint', backends: { a: backend('a', []) }, error: /backend a has no ready endpoint/ },
    {
      name: 'its own backend policy is invalid (fails closed rather than calling without the TLS it asks for)',
      backends: { a: backend('a', TWO, { connection: { invalid: [{ source: 'ProxyPolicy/ns/p', message: 'ConfigMap ns/ca not found' }] } }) },
      error: /backend a: its backend policy is invalid \(ProxyPolicy\/ns\/p: ConfigMap ns\/ca not found\)/,
    },
  ];
  for (const c of refused) it(`refuses a backend ${c.name}`, () => assert.throws(() => backendTargets(c.backends, 'a'), c.error));

  it('speaks TLS as the Service\'s tls policy says: CA, SNI, the name checked against the SNI; tcp connect timeout', () => {
    const ca = '-----BEGIN CERTIFICATE-----\nTEST\n-----END CERTIFICATE-----\n';
    const [target] = backendTargets({ a: backend('a', TWO, { connection: { tls: { caCertificatePem: ca, sni: 'authz.internal' }, tcp: { connectTimeoutMs: 1500 } } }) }, 'a').all;
    assert.ok(typeof target.tls === 'object');
    assert.equal(target.tls.servername, 'authz.internal');
    assert.equal(target.tls.ca, ca);
    assert.equal(target.tls.rejectUnauthorized, true);
    assert.equal(typeof target.tls.checkServerIdentity, 'function');
    assert.equal(target.connectTimeoutMs, 1500);
    assert.match(target.settings ?? '', /^[0-9a-f]{16}$/);
  });

  it('sends no SNI to an IP endpoint without a configured one; insecureSkipVerify All does not verify', () => {
    const [target] = backendTargets({ a: backend('a', TWO, { connection: { tls: { insecureSkipVerify: 'All' } } }) }, 'a').all;
    assert.ok(typeof target.tls === 'object');
    assert.equal(target.tls.servername, undefined);
    assert.equal(target.tls.rejectUnauthorized, false);
  });

  it('live targets follow the newest published config; one without the backend leaves them as they were made', () => {
    publishBackends({ live: backend('live', TWO) });
    const live = liveTargets('live');
    assert.equal(isPublished('live'), true);
    assert.deepEqual([live.next(), live.next()].map((t) => t.host), ['10.0.0.1', '10.0.0.2']);
    publishBackends({ live: backend('live', [{ host: '10.0.0.9', port: 9000 }]) });
    assert.deepEqual([live.next(), live.next()].map((t) => t.host), ['10.0.0.9', '10.0.0.9']);
    assert.deepEqual(live.all.map((t) => t.host), ['10.0.0.9']);
    publishBackends({ live: backend('live', [{ host: '10.0.0.9', port: 9000 }]) });
    const made = liveTargets('live');
    publishBackends({});
    assert.deepEqual([made.next(), made.next()].map((t) => t.host), ['10.0.0.9', '10.0.0.9']);
    assert.throws(() => liveTargets('live'), /not in the config/, 'resolving one that is not published fails at once (compile time)');
    publishBackends({ live: backend('live', []) });
    assert.throws(() => made.next(), /has no ready endpoint/, 'a newer config where it has no endpoint fails the call');
  });
});
