/**
 * The config stream between a real RemoteDistributor (gRPC on a free port) and a proxy — a raw
 * connect client where the wire matters (deltas, nonces, refusals), the real RemoteConfigClient
 * over a recording runtime double where the proxy's behaviour matters (NACK, rollback, resync).
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { create } from '@bufbuild/protobuf';
import { Code, ConnectError, createClient } from '@connectrpc/connect';
import { createGrpcTransport } from '@connectrpc/connect-node';
import { createWritableIterable } from '@connectrpc/connect/protocol';
import { Registry } from 'prom-client';
import { createLogger } from '../../src/common/logger.ts';
import type { Bind, ProxyConfig } from '../../src/ir/types.ts';
import type { ApplyResult, ConfigRuntime } from '../../src/distribute/types.ts';
import { StaticTokenAuthenticator } from '../../src/distribute/remote/auth.ts';
import { RemoteConfigClient } from '../../src/distribute/remote/client.ts';
import { ConfigDistribution, ConfigRequestSchema, SubscribeSchema, type ConfigRequest, type ConfigResponse, type ResourceType } from '../../src/distribute/remote/gen/v1/config_pb.js';
import { RemoteDistributor } from '../../src/distribute/remote/server.ts';
import type { GatewayRef } from '../../src/distribute/remote/split.ts';

const logger = createLogger({ level: 'silent' });
const TOKENS = {
  'token-a': 'system:serviceaccount:team-a:proxy',
  'token-b': 'system:serviceaccount:team-b:proxy',
  'token-user': 'alice@example.com',
};

/** Gateway team-a/web on port `port` with one route to one backend whose endpoint port is `backendPort`. */
function config(version: string, opts: { backendPort?: number; port?: number; extraRoute?: boolean; otherGateway?: boolean } = {}): ProxyConfig {
  const routes = ['team-a/r1', ...(opts.extraRoute ? ['team-a/r2'] : [])];
  const binds: Bind[] = [{
    key: 'bind/http', port: opts.port ?? 18080, protocol: 'HTTP',
    listeners: [{ key: 'team-a/web/http', gateway: { namespace: 'team-a', name: 'web' }, sectionName: 'http', hostname: null, protocol: 'HTTP', routes: routes.map((routeKey) => ({ routeKey, hostnames: [] })) }],
  }];
  if (opts.otherGateway) {
    binds.push({ key: 'bind/b', port: 18081, protocol: 'HTTP', listeners: [{ key: 'team-b/web/http', gateway: { namespace: 'team-b', name: 'web' }, sectionName: 'http', hostname: null, protocol: 'HTTP', routes: [] }] });
  }
  const route = (key: string) => ({ key, namespace: 'team-a', name: key.split('/')[1] as string, creationTimestamp: '2026-01-01T00:00:00Z', rules: [{ key: `${key}/rule/0`, matches: [], filters: [], backends: [{ backendKey: 'backend/team-a/echo', weight: 1, filters: [] }] }] });
  return {
    version, binds,
    routes: Object.fromEntries(routes.map((k) => [k, route(k)])),
    backends: { 'backend/team-a/echo': { key: 'backend/team-a/echo', kind: 'ProxyBackend', namespace: 'team-a', name: 'echo', endpoints: [{ host: '127.0.0.1', port: opts.backendPort ?? 9 }], rewriteHost: false } },
  };
}

interface Events {
  acks: { gateway: GatewayRef; proxyId: string; version: string }[];
  nacks: { gateway: GatewayRef; proxyId: string; error: string }[];
}

async function startDistributor(): Promise<{ distributor: RemoteDistributor; events: Events; registry: Registry }> {
  const events: Events = { acks: [], nacks: [] };
  const registry = new Registry();
  const distributor = new RemoteDistributor({
    port: 0, host: '127.0.0.1', mode: 'plaintext', authenticator: new StaticTokenAuthenticator(TOKENS), logger, registry,
    onAck: (gateway, proxyId, { version }) => events.acks.push({ gateway, proxyId, version }),
    onNack: (gateway, proxyId, error) => events.nacks.push({ gateway, proxyId, error }),
  });
  await distributor.start();
  return { distributor, events, registry };
}

/** A raw stream: the test writes requests and reads responses one by one. */
function rawStream(port: number, token: string | undefined) {
  const client = createClient(ConfigDistribution, createGrpcTransport({ baseUrl: `http://127.0.0.1:${port}` }));
  const requests = createWritableIterable<ConfigRequest>();
  const abort = new AbortController();
  const responses = client.streamConfig(requests, { signal: abort.signal, headers: token ? { authorization: `Bearer ${token}` } : {} })[Symbol.asyncIterator]();
  return {
    send: (request: ConfigRequest['kind']) => void requests.write(create(ConfigRequestSchema, { kind: request })).catch(() => undefined),
    next: async (): Promise<ConfigResponse> => {
      const r = await responses.next();
      if (r.done) throw new Error('stream ended');
      return r.value;
    },
    close: () => abort.abort(),
  };
}

function subscribe(namespace: string, gateways: string[], initialResources: { type: ResourceType; name: string; version: string }[] = []): ConfigRequest['kind'] {
  return { case: 'subscribe', value: create(SubscribeSchema, { namespace, gateways, proxyId: 'pod-1', initialResources }) };
}

async function until(what: string, check: () => boolean, timeoutMs = 5_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((ok) => setTimeout(ok, 10));
  }
}

describe('config stream, wire level', () => {
  let distributor: RemoteDistributor;
  let events: Events;
  let registry: Registry;
  before(async () => {
    ({ distributor, events, registry } = await startDistributor());
    await distributor.publish(config('c1'));
  });
  after(() => distributor.close());

  it('sends a subscriber its gateways\' resources, then only what changed; ACKs are reported', async () => {
    const stream = rawStream(distributor.port as number, 'token-a');
    stream.send(subscribe('team-a', ['web']));
    const first = await stream.next();
    assert.deepEqual(first.resources.map((r) => r.name).sort(), ['backend/team-a/echo', 'bind/http', 'team-a/r1']);
    assert.deepEqual(JSON.parse(new TextDecoder().decode(first.resources.find((r) => r.name === 'team-a/r1')?.body)).key, 'team-a/r1');
    stream.send({ case: 'ack', value: { nonce: first.nonce, systemVersion: first.systemVersion } as never });
    await until('the ACK callback', () => events.acks.length === 1);
    assert.deepEqual(events.acks[0], { gateway: { namespace: 'team-a', name: 'web' }, proxyId: 'pod-1', version: first.systemVersion });

    await distributor.publish(config('c2', { extraRoute: true }));
    const second = await stream.next();
    assert.deepEqual(second.resources.map((r) => r.name).sort(), ['bind/http', 'team-a/r2']);
    assert.notEqual(second.nonce, first.nonce);
    stream.send({ case: 'ack', value: { nonce: second.nonce, systemVersion: second.systemVersion } as never });

    await distributor.publish(config('c3'));
    const third = await stream.next();
    assert.deepEqual(third.removedResources.map((r) => r.name), ['team-a/r2']);
    stream.send({ case: 'nack', value: { nonce: third.nonce, systemVersion: third.systemVersion, errors: ['bind bind/http: cannot listen'] } as never });
    await until('the NACK callback', () => events.nacks.length === 1);
    assert.deepEqual(events.nacks[0], { gateway: { namespace: 'team-a', name: 'web' }, proxyId: 'pod-1', error: 'bind bind/http: cannot listen' });
    assert.deepEqual(distributor.proxies().map((p) => p.lastError), [['bind bind/http: cannot listen']]);
    assert.match(await registry.metrics(), /switchboard_xds_nacks_total\{namespace="team-a",gateway="web"\} 1/);

    // The refused change reverted: the proxy already serves this, so nothing is sent, and the
    // refusal is over (reported as an ACK of the version it serves).
    await distributor.publish(config('c2', { extraRoute: true }));
    await until('the revert to count as acknowledged', () => events.acks.length === 3);
    assert.deepEqual(events.acks[2], { gateway: { namespace: 'team-a', name: 'web' }, proxyId: 'pod-1', version: second.systemVersion });
    assert.deepEqual(distributor.proxies().map((p) => p.lastError), [undefined]);

    // The refused version is not sent again; the next publish is diffed against the last ACK.
    await distributor.publish(config('c4', { extraRoute: true, backendPort: 10 }));
    const fourth = await stream.next();
    assert.deepEqual(fourth.resources.map((r) => r.name).sort(), ['backend/team-a/echo']);
    stream.close();
  });

  it('a reconnecting proxy that holds the current resources gets an empty response', async () => {
    const first = rawStream(distributor.port as number, 'token-a');
    first.send(subscribe('team-a', ['web']));
    const full = await first.next();
    first.close();
    const again = rawStream(distributor.port as number, 'token-a');
    again.send(subscribe('team-a', ['web'], full.resources.map((r) => ({ type: r.type, name: r.name, version: r.version }))));
    const resync = await again.next();
    assert.equal(resync.resources.length + resync.removedResources.length, 0);
    assert.equal(resync.systemVersion, full.systemVersion);
    again.close();
  });

  const refusals: { name: string; token: string | undefined; namespace: string; code: Code }[] = [
    { name: 'no token', token: undefined, namespace: 'team-a', code: Code.Unauthenticated },
    { name: 'a token the authenticator does not know', token: 'forged', namespace: 'team-a', code: Code.Unauthenticated },
    { name: 'a user that is not a ServiceAccount', token: 'token-user', namespace: 'team-a', code: Code.PermissionDenied },
    { name: 'a ServiceAccount of another namespace', token: 'token-b', namespace: 'team-a', code: Code.PermissionDenied },
  ];
  for (const r of refusals) {
    it(`refuses ${r.name} (${Code[r.code]}) and sends nothing`, async () => {
      const stream = rawStream(distributor.port as number, r.token);
      stream.send(subscribe(r.namespace, ['web']));
      await assert.rejects(stream.next(), (err: unknown) => ConnectError.from(err).code === r.code);
      stream.close();
    });
  }

  it('a proxy of team-b gets team-b\'s gateway and nothing of team-a', async () => {
    await distributor.publish(config('c5', { otherGateway: true }));
    const stream = rawStream(distributor.port as number, 'token-b');
    stream.send(subscribe('team-b', ['web']));
    const response = await stream.next();
    assert.deepEqual(response.resources.map((r) => r.name), ['bind/b']);
    assert.doesNotMatch(new TextDecoder().decode(response.resources[0]?.body), /team-a/);
    stream.close();
  });
});

/** A ConfigRuntime that records what it is asked to apply and fails applies the test chooses. */
class RecordingRuntime implements ConfigRuntime {
  applied: ProxyConfig[] = [];
  failWhen: (config: ProxyConfig) => string | undefined = () => undefined;
  apply(config: ProxyConfig): Promise<ApplyResult> {
    this.applied.push(config);
    const error = this.failWhen(config);
    return Promise.resolve({ version: config.version, errors: error ? [error] : [] });
  }
  ready(): boolean {
    return true;
  }
  close(): Promise<void> {
    return Promise.resolve();
  }
}

describe('RemoteConfigClient against the distributor', () => {
  it('applies, NACKs what validation or the runtime rejects (restoring the last good config), and resyncs after a controller restart', async () => {
    let { distributor, events } = await startDistributor();
    const port = distributor.port as number;
    const runtime = new RecordingRuntime();
    const client = new RemoteConfigClient({
      controller: `http://127.0.0.1:${port}`, token: () => Promise.resolve('token-a'), namespace: 'team-a', gateways: ['web'], proxyId: 'pod-1',
      runtime, logger, registry: new Registry(), backoff: { initialMs: 20, maxMs: 100 },
    });
    try {
      await distributor.publish(config('c1'));
      client.start();
      await until('the first config', () => client.current() !== undefined);
      const good = client.current() as ProxyConfig;
      assert.deepEqual(Object.keys(good.routes), ['team-a/r1']);

      // A config the IR validator rejects (a route to a backend that is not there) never reaches the runtime.
      const broken = config('c2', { extraRoute: true });
      await distributor.publish({ ...broken, routes: { ...broken.routes, 'team-a/r2': { ...broken.routes['team-a/r2'], rules: [{ key: 'team-a/r2/rule/0', matches: [], filters: [], backends: [{ backendKey: 'backend/team-a/missing', weight: 1, filters: [] }] }] } as never } });
      await until('the validation NACK', () => events.nacks.length === 1);
      assert.match(events.nacks[0]?.error ?? '', /backend\/team-a\/missing/);
      assert.equal(runtime.applied.length, 1);
      assert.equal(client.current(), good);

      // A config the runtime rejects: applied, refused, and the last good one applied again.
      runtime.failWhen = (c) => (c.binds[0]?.port === 19999 ? 'bind bind/http: cannot listen on port 19999: EADDRINUSE' : undefined);
      await distributor.publish(config('c3', { port: 19999 }));
      await until('the runtime NACK', () => events.nacks.length === 2);
      assert.match(events.nacks[1]?.error ?? '', /EADDRINUSE/);
      assert.equal(runtime.applied.at(-1), good);
      assert.equal(client.current(), good);

      // A good config after the refusals is applied and acknowledged.
      await distributor.publish(config('c4', { backendPort: 10 }));
      await until('the next ACK', () => client.current()?.backends['backend/team-a/echo']?.endpoints[0]?.port === 10);
      const served = client.current() as ProxyConfig;

      // Controller restart: the proxy keeps its config, reconnects, and is sent nothing it holds.
      await distributor.close();
      await until('the proxy noticing', () => !client.isConnected());
      assert.equal(client.current(), served);
      ({ distributor, events } = await restartOn(port));
      const appliedBefore = runtime.applied.length;
      await distributor.publish(config('c4', { backendPort: 10 }));
      await until('the resync ACK', () => events.acks.length === 1, 10_000);
      assert.equal(runtime.applied.length, appliedBefore, 'a resync that changes nothing applies nothing');
      // … and changes made while it was away arrive.
      await distributor.publish(config('c5', { backendPort: 11 }));
      await until('the change after the restart', () => client.current()?.backends['backend/team-a/echo']?.endpoints[0]?.port === 11);
    } finally {
      await client.close();
      await distributor.close();
    }
  });
});

async function restartOn(port: number): Promise<{ distributor: RemoteDistributor; events: Events }> {
  const events: Events = { acks: [], nacks: [] };
  const distributor = new RemoteDistributor({
    port, host: '127.0.0.1', mode: 'plaintext', authenticator: new StaticTokenAuthenticator(TOKENS), logger, registry: new Registry(),
    onAck: (gateway, proxyId, { version }) => events.acks.push({ gateway, proxyId, version }),
    onNack: (gateway, proxyId, error) => events.nacks.push({ gateway, proxyId, error }),
  });
  await distributor.start();
  return { distributor, events };
}

describe('dead connections', () => {
  it('a connection that goes quiet is closed by the controller; a pinging proxy stays connected', async () => {
    const distributor = new RemoteDistributor({ port: 0, host: '127.0.0.1', mode: 'plaintext', authenticator: new StaticTokenAuthenticator(TOKENS), logger, registry: new Registry(), sessionIdleTimeoutMs: 400 });
    await distributor.start();
    const client = new RemoteConfigClient({
      controller: `http://127.0.0.1:${distributor.port}`, token: () => Promise.resolve('token-a'), namespace: 'team-a', gateways: ['web'], proxyId: 'pinging',
      runtime: new RecordingRuntime(), logger, registry: new Registry(), keepaliveMs: 100,
    });
    const quiet = rawStream(distributor.port as number, 'token-a');
    try {
      await distributor.publish(config('c1'));
      client.start();
      quiet.send(subscribe('team-a', ['web']));
      await quiet.next();
      await until('both connected', () => distributor.proxies().length === 2);
      // The raw stream never answers nor pings: it is closed after the idle timeout.
      await until('the quiet one dropped', () => distributor.proxies().length === 1, 3_000);
      await new Promise((ok) => setTimeout(ok, 1_000));
      assert.deepEqual(distributor.proxies().map((p) => p.proxyId), ['pinging']);
      assert.ok(client.isConnected());
    } finally {
      quiet.close();
      await client.close();
      await distributor.close();
    }
  });
});

describe('request bounds', () => {
  it('a request message over 4 MiB ends the stream (RESOURCE_EXHAUSTED)', async () => {
    const { distributor } = await startDistributor();
    try {
      await distributor.publish(config('c1'));
      const stream = rawStream(distributor.port as number, 'token-a');
      const huge = Array.from({ length: 50_000 }, (_, i) => ({ type: 2 as ResourceType, name: `team-a/${'r'.repeat(80)}${i}`, version: 'v' }));
      stream.send(subscribe('team-a', ['web'], huge));
      await assert.rejects(stream.next(), (err: unknown) => ConnectError.from(err).code === Code.ResourceExhausted);
      stream.close();
    } finally {
      await distributor.close();
    }
  });
});
