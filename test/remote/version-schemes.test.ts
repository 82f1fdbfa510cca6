/**
 * Rolling upgrades across the system version schemes (src/distribute/remote/version.ts): a proxy
 * built before schemes (subscribes without one, checks SORTED) against this controller, and this
 * proxy against a controller built before schemes (answers without one, in SORTED). Neither side
 * may refuse the other's config or loop on it.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { create } from '@bufbuild/protobuf';
import { createClient } from '@connectrpc/connect';
import { createGrpcTransport } from '@connectrpc/connect-node';
import { createWritableIterable } from '@connectrpc/connect/protocol';
import { Registry } from 'prom-client';
import { createLogger } from '../../src/common/logger.ts';
import type { ProxyConfig } from '../../src/ir/types.ts';
import type { ApplyResult, ConfigRuntime } from '../../src/distribute/types.ts';
import { StaticTokenAuthenticator } from '../../src/distribute/remote/auth.ts';
import { RemoteConfigClient } from '../../src/distribute/remote/client.ts';
import { ConfigDistribution, ConfigRequestSchema, ConfigResponseSchema, SubscribeSchema, type ConfigRequest, type ConfigResponse } from '../../src/distribute/remote/gen/v1/config_pb.js';
import { RemoteDistributor } from '../../src/distribute/remote/server.ts';
import { diffSlice, resourceId, sliceForGateways, sliceVersion, versionsOf, type Delta } from '../../src/distribute/remote/split.ts';
import { SystemVersionScheme } from '../../src/distribute/remote/version.ts';
import { toWireRef, toWireResource, kindOf } from '../../src/distribute/remote/wire.ts';

const logger = createLogger({ level: 'silent' });
const GATEWAY = { namespace: 'team-a', name: 'web' };

function config(version: string, routeNames: string[]): ProxyConfig {
  const route = (key: string) => ({ key, namespace: 'team-a', name: key.split('/')[1] as string, creationTimestamp: '2026-01-01T00:00:00Z', rules: [{ key: `${key}/rule/0`, matches: [], filters: [], backends: [{ backendKey: 'backend/team-a/echo', weight: 1, filters: [] }] }] });
  const keys = routeNames.map((n) => `team-a/${n}`);
  return {
    version,
    binds: [{ key: 'bind/http', port: 18080, protocol: 'HTTP', listeners: [{ key: 'team-a/web/http', gateway: GATEWAY, sectionName: 'http', hostname: null, protocol: 'HTTP', routes: keys.map((routeKey) => ({ routeKey, hostnames: [] })) }] }],
    routes: Object.fromEntries(keys.map((k) => [k, route(k)])),
    backends: { 'backend/team-a/echo': { key: 'backend/team-a/echo', kind: 'ProxyBackend', namespace: 'team-a', name: 'echo', endpoints: [{ host: '127.0.0.1', port: 9 }], rewriteHost: false } },
  };
}

describe('an old proxy (no scheme in its subscribe) and this controller', () => {
  let distributor: RemoteDistributor;
  const acks: string[] = [];
  const nacks: string[] = [];
  before(async () => {
    distributor = new RemoteDistributor({
      port: 0, host: '127.0.0.1', mode: 'plaintext', authenticator: new StaticTokenAuthenticator({ 'token-a': 'system:serviceaccount:team-a:proxy' }), logger, registry: new Registry(),
      onAck: (_, __, { version }) => acks.push(version), onNack: (_, __, error) => nacks.push(error),
    });
    await distributor.start();
    await distributor.publish(config('c1', ['r1']));
  });
  after(() => distributor.close());

  it('is answered in SORTED, which the old proxy\'s check accepts after each delta; its ACKs count', async () => {
    const client = createClient(ConfigDistribution, createGrpcTransport({ baseUrl: `http://127.0.0.1:${distributor.port as number}` }));
    const requests = createWritableIterable<ConfigRequest>();
    const abort = new AbortController();
    const responses = client.streamConfig(requests, { signal: abort.signal, headers: { authorization: 'Bearer token-a' } })[Symbol.asyncIterator]();
    const send = (kind: ConfigRequest['kind']) => void requests.write(create(ConfigRequestSchema, { kind })).catch(() => undefined);
    const next = async (): Promise<ConfigResponse> => (await responses.next()).value as ConfigResponse;
    // The old proxy's own check: SORTED over what it holds once the response is applied.
    const held = new Map<string, string>();
    const oldProxyAccepts = (response: ConfigResponse): boolean => {
      for (const r of response.removedResources) held.delete(resourceId(kindOf(r.type), r.name));
      for (const r of response.resources) held.set(resourceId(kindOf(r.type), r.name), r.version);
      return sliceVersion(held) === response.systemVersion;
    };
    try {
      send({ case: 'subscribe', value: create(SubscribeSchema, { namespace: 'team-a', gateways: ['web'], proxyId: 'old-proxy' }) });
      const first = await next();
      assert.equal(first.systemVersionScheme, SystemVersionScheme.SORTED);
      assert.ok(oldProxyAccepts(first));
      send({ case: 'ack', value: { nonce: first.nonce, systemVersion: first.systemVersion } as never });
      await distributor.publish(config('c2', ['r1', 'r2']));
      const second = await next();
      assert.ok(oldProxyAccepts(second), 'a delta: the held set makes the SORTED version');
      send({ case: 'ack', value: { nonce: second.nonce, systemVersion: second.systemVersion } as never });
      await distributor.publish(config('c3', ['r2']));
      const third = await next();
      assert.deepEqual(third.removedResources.map((r) => r.name), ['team-a/r1']);
      assert.ok(oldProxyAccepts(third), 'a removal');
      send({ case: 'ack', value: { nonce: third.nonce, systemVersion: third.systemVersion } as never });
      for (const deadline = Date.now() + 5000; acks.length < 3 && Date.now() < deadline;) await new Promise((ok) => setTimeout(ok, 10));
      assert.deepEqual(acks, [first.systemVersion, second.systemVersion, third.systemVersion]);
      assert.deepEqual(nacks, []);
    } finally {
      abort.abort();
    }
  });
});

class RecordingRuntime implements ConfigRuntime {
  applied: ProxyConfig[] = [];
  apply(config: ProxyConfig): Promise<ApplyResult> {
    this.applied.push(config);
    return Promise.resolve({ version: config.version, errors: [] });
  }
  ready(): boolean {
    return true;
  }
  close(): Promise<void> {
    return Promise.resolve();
  }
}

describe('this proxy and an old controller (no scheme in its responses)', () => {
  /** A response as a controller of either build sends it: the delta from `held` to `config`'s slice. */
  function response(nonce: string, target: ProxyConfig, held: Map<string, string>, scheme: SystemVersionScheme | undefined): { response: ConfigResponse; versions: Map<string, string> } {
    const slice = sliceForGateways(target, [GATEWAY]);
    const delta: Delta = diffSlice(slice.resources, held);
    return {
      response: create(ConfigResponseSchema, {
        nonce, controllerVersion: target.version,
        systemVersion: slice.versionIn(scheme ?? SystemVersionScheme.SORTED),
        ...(scheme === undefined ? {} : { systemVersionScheme: scheme }),
        resources: delta.added.map(toWireResource), removedResources: delta.removed.map(toWireRef),
      }),
      versions: versionsOf(slice.resources),
    };
  }

  it('applies SORTED responses (and SUM ones after the controller is upgraded), refuses a wrong version or an unknown scheme', async () => {
    const runtime = new RecordingRuntime();
    const client = new RemoteConfigClient({ controller: 'http://127.0.0.1:1', token: () => Promise.resolve('t'), namespace: 'team-a', gateways: ['web'], proxyId: 'p', runtime, logger, registry: new Registry() });
    let held = new Map<string, string>();
    const steps: [string, ProxyConfig, SystemVersionScheme | undefined][] = [
      ['old controller, first config', config('c1', ['r1']), undefined],
      ['old controller, a route added', config('c2', ['r1', 'r2']), undefined],
      ['upgraded controller (SUM), a route removed', config('c3', ['r2']), SystemVersionScheme.SUM],
      ['old controller again (rolled back), a route added', config('c4', ['r2', 'r3']), undefined],
      ['upgraded controller, a route changed back', config('c5', ['r3']), SystemVersionScheme.SUM],
    ];
    for (const [name, target, scheme] of steps) {
      const { response: r, versions } = response(name, target, held, scheme);
      assert.deepEqual(await client.apply(r), { ok: true }, name);
      assert.deepEqual(Object.keys(client.current()?.routes ?? {}).sort(), Object.keys(target.routes).sort(), name);
      held = versions;
    }
    const applied = runtime.applied.length;
    const wrong = response('wrong', config('c6', ['r1']), held, SystemVersionScheme.SUM).response;
    const refusedWrong = await client.apply(create(ConfigResponseSchema, { ...wrong, systemVersion: '0'.repeat(32) }));
    assert.equal(refusedWrong.ok, false);
    const unknown = response('unknown', config('c6', ['r1']), held, 9 as SystemVersionScheme).response;
    const refusedUnknown = await client.apply(unknown);
    assert.equal(refusedUnknown.ok, false);
    assert.match(refusedUnknown.ok ? '' : refusedUnknown.errors.join(), /scheme 9/);
    assert.equal(runtime.applied.length, applied, 'nothing refused reached the runtime');
    // Still in step after the refusals: the next good SUM response applies.
    assert.deepEqual(await client.apply(response('after', config('c7', ['r1']), held, SystemVersionScheme.SUM).response), { ok: true });
  });
});
