/**
 * Kubernetes mode end to end: fake API server → `switchboard controller` (in-process, the real
 * KubeSource, translator thread, status writer, leader Lease and gRPC distribution) → a remote
 * proxy (RemoteConfigClient + the proxy runtime) serving traffic to an echo upstream.
 */
import assert from 'node:assert/strict';
import { createServer, type AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { Registry } from 'prom-client';
import { parseAllDocuments } from 'yaml';
import { parseControllerArgs } from '../../src/cli/commands/controller-args.ts';
import { startController, type RunningController } from '../../src/cli/commands/controller.ts';
import { silentLogger } from '../../src/common/logger.ts';
import { RemoteConfigClient } from '../../src/distribute/remote/client.ts';
import { createProxyRuntime } from '../../src/distribute/proxy-runtime.ts';
import type { ConfigRuntime } from '../../src/distribute/types.ts';
import { sendRequest } from '../support/client.ts';
import { startEchoServer, type EchoServer } from '../support/echo-server.ts';
import { closedPort } from '../support/fleet.ts';
import { gatewayClass, service } from '../support/manifests.ts';
import { FakeApiServer } from './fake-apiserver.ts';

const GW = 'gateway.networking.k8s.io/v1';
const NS = 'apps';
const PROXY_TOKEN = 'proxy-sa-token';
const OTHER_TOKEN = 'other-namespace-token';

async function until(check: () => boolean | Promise<boolean>, what: string, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await Promise.resolve(check()).catch(() => false))) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

function route(path: string, name = 'echo-route'): Record<string, unknown> {
  return {
    apiVersion: GW, kind: 'HTTPRoute', metadata: { name, namespace: NS },
    spec: { parentRefs: [{ name: 'gw' }], rules: [{ matches: [{ path: { type: 'PathPrefix', value: path } }], backendRefs: [{ name: 'echo', port: 8080 }] }] },
  };
}

type Condition = { type: string; status: string; reason?: string; message?: string; observedGeneration?: number };
const conditionsOf = (object: Record<string, unknown> | undefined, list?: 'parents'): Condition[] => {
  const status = object?.status as { conditions?: Condition[]; parents?: { conditions: Condition[] }[] } | undefined;
  return (list ? status?.parents?.[0]?.conditions : status?.conditions) ?? [];
};

describe('Kubernetes mode: fake API server → controller → remote proxy', () => {
  let server: FakeApiServer;
  let echo: EchoServer;
  let listenerPort: number;
  /** Fixed across controller restarts: proxies reconnect to the same address. */
  let xdsPort: number;
  let controller: RunningController | undefined;
  const proxies: { client: RemoteConfigClient; runtime: ConfigRuntime }[] = [];

  const startOurController = async (): Promise<RunningController> => {
    const options = parseControllerArgs([
      '--health-address', '127.0.0.1:0', '--metrics-address', '127.0.0.1:0', '--admin-address', '127.0.0.1:0', '--xds-address', `127.0.0.1:${xdsPort}`,
      '--xds-mode', 'plaintext', '--leader-election-namespace', 'switchboard-system',
    ], {});
    assert.notEqual(options, 'help');
    if (options === 'help') throw new Error('unreachable');
    return startController(options, { kubeConfig: server.kubeConfig(), logger: silentLogger, lease: { leaseDurationMs: 2000, renewDeadlineMs: 1000, retryPeriodMs: 100 } });
  };
  const startProxy = (xdsPort: number, token: string, namespace: string): { client: RemoteConfigClient; runtime: ConfigRuntime } => {
    const runtime = createProxyRuntime({ logger: silentLogger, registry: new Registry() });
    const client = new RemoteConfigClient({
      controller: `http://127.0.0.1:${xdsPort}`, token: () => Promise.resolve(token), namespace, gateways: ['gw'], proxyId: `proxy-${proxies.length}`,
      runtime, logger: silentLogger, registry: new Registry(), backoff: { initialMs: 50, maxMs: 200 },
    });
    client.start();
    const proxy = { client, runtime };
    proxies.push(proxy);
    return proxy;
  };
  const get = (path: string) => sendRequest(listenerPort, { path, host: 'echo.example' });

  before(async () => {
    // Bookmarks every 200 ms: the controller's watches resume from fresh resourceVersions.
    server = await FakeApiServer.start({ bookmarkIntervalMs: 200 });
    echo = await startEchoServer('echo');
    listenerPort = await closedPort();
    xdsPort = await closedPort();
    server.tokens.set(PROXY_TOKEN, { username: `system:serviceaccount:${NS}:gw-proxy` });
    server.tokens.set(OTHER_TOKEN, { username: 'system:serviceaccount:elsewhere:gw-proxy' });
    server.put({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: NS } });
    for (const doc of parseAllDocuments(gatewayClass() + service('echo', echo, { namespace: NS }))) server.put(doc.toJS() as Record<string, unknown>);
    server.put({ apiVersion: GW, kind: 'Gateway', metadata: { name: 'gw', namespace: NS }, spec: { gatewayClassName: 'switchboard', listeners: [{ name: 'http', port: listenerPort, protocol: 'HTTP' }] } });
    server.put(route('/echo'));
    controller = await startOurController();
  });

  after(async () => {
    for (const proxy of proxies) {
      await proxy.client.close();
      await proxy.runtime.close({ graceMs: 0 });
    }
    await controller?.stop();
    await echo.close();
    await server.close();
  });

  it('a remote proxy serves the route; status is written back', async () => {
    assert.equal(controller!.isReady(), true);
    const watches = server.requests.filter((r) => r.query.watch === 'true');
    assert.ok(watches.length >= 15 && watches.every((r) => r.query.allowWatchBookmarks === 'true' && r.query.resourceVersion), 'every kind is watched from its list\'s resourceVersion, with bookmarks');
    const health = await fetch(`http://127.0.0.1:${controller!.ports.health}/healthz/ready`);
    assert.equal(health.status, 200);
    startProxy(controller!.ports.xds, PROXY_TOKEN, NS);
    await until(async () => (await get('/echo/hello')).status === 200, 'the proxy to serve /echo')
      .catch((err: Error) => { throw new Error(`${err.message}; proxies: ${JSON.stringify(controller!.distributor.proxies())}`); });
    assert.equal((await get('/echo/hello')).echo().server, 'echo');

    await until(() => controller!.isLeader(), 'leadership');
    await until(() => conditionsOf(server.get(GW, 'HTTPRoute', 'echo-route', NS), 'parents').some((c) => c.type === 'Accepted' && c.status === 'True'), 'HTTPRoute status');
    await until(() => conditionsOf(server.get(GW, 'Gateway', 'gw', NS)).some((c) => c.type === 'Accepted' && c.status === 'True'), 'Gateway status');
    const accepted = conditionsOf(server.get(GW, 'HTTPRoute', 'echo-route', NS), 'parents').find((c) => c.type === 'Accepted')!;
    assert.equal(accepted.observedGeneration, 1);
    await until(() => conditionsOf(server.get(GW, 'Gateway', 'gw', NS)).some((c) => c.type === 'Programmed' && c.status === 'True'), 'Gateway Programmed once the proxy acknowledged');
    const managers = (server.get(GW, 'HTTPRoute', 'echo-route', NS)!.metadata as { managedFields: { manager: string; subresource?: string }[] }).managedFields;
    assert.ok(managers.some((m) => m.manager === 'switchboard-controller' && m.subresource === 'status'));
  });

  it('a proxy whose ServiceAccount lives in another namespace gets nothing', async () => {
    const stranger = startProxy(controller!.ports.xds, OTHER_TOKEN, NS);
    await new Promise((r) => setTimeout(r, 500));
    assert.equal(stranger.client.current(), undefined);
  });

  it('follows an edit and a delete', async () => {
    server.put(route('/moved'));
    await until(async () => (await get('/moved/x')).status === 200 && (await get('/echo/x')).status === 404, 'the edited route');
    await until(() => conditionsOf(server.get(GW, 'HTTPRoute', 'echo-route', NS), 'parents').some((c) => c.type === 'Accepted' && c.observedGeneration === 2), 'observedGeneration 2');
    server.remove(GW, 'HTTPRoute', 'echo-route', NS);
    await until(async () => (await get('/moved/x')).status === 404, 'the deleted route');
    server.put(route('/echo'));
    await until(async () => (await get('/echo/x')).status === 200, 'the route back');
  });

  it('follows a change made while its watches were broken and the history compacted (410 → re-list)', async () => {
    const relists = (): number => server.requests.filter((r) => r.path === '/apis/gateway.networking.k8s.io/v1/httproutes' && r.query.watch === undefined).length;
    const before = relists();
    server.dropWatches();
    server.put(route('/during-outage', 'outage-route'));
    server.compact();
    await until(async () => (await get('/during-outage/x')).status === 200, 'the change, through a re-list');
    assert.ok(relists() > before, 'the HTTPRoutes were listed again');
    server.remove(GW, 'HTTPRoute', 'outage-route', NS);
    await until(async () => (await get('/during-outage/x')).status === 404, 'the delete after the re-list');
  });

  it('a NACKed update leaves the proxy on its last good config and the Gateway says why', async () => {
    // A second listener on a port something else holds: the proxy cannot bind it and refuses the config.
    const blocker = createServer();
    await new Promise<void>((r) => blocker.listen(0, '0.0.0.0', r));
    const blockedPort = (blocker.address() as AddressInfo).port;
    const listeners = [{ name: 'http', port: listenerPort, protocol: 'HTTP' }];
    try {
      server.put({ apiVersion: GW, kind: 'Gateway', metadata: { name: 'gw', namespace: NS }, spec: { gatewayClassName: 'switchboard', listeners: [...listeners, { name: 'blocked', port: blockedPort, protocol: 'HTTP' }] } });
      await until(() => conditionsOf(server.get(GW, 'Gateway', 'gw', NS)).some((c) => c.type === 'Programmed' && c.status === 'False' && c.reason === 'Invalid'), 'the Gateway to report the refusal');
      const programmed = conditionsOf(server.get(GW, 'Gateway', 'gw', NS)).find((c) => c.type === 'Programmed')!;
      assert.match(programmed.message ?? '', /refused the config/);
      assert.match(programmed.message ?? '', new RegExp(String(blockedPort)));
      assert.equal((await get('/echo/x')).status, 200, 'the proxy still serves its last good config');
    } finally {
      server.put({ apiVersion: GW, kind: 'Gateway', metadata: { name: 'gw', namespace: NS }, spec: { gatewayClassName: 'switchboard', listeners } });
      await new Promise<void>((r) => blocker.close(() => r()));
    }
    // Restoring the Gateway alone returns the proxy's slice to what it already serves: nothing is
    // sent, and the distributor counts that as in step, which clears the refusal.
    await until(() => conditionsOf(server.get(GW, 'Gateway', 'gw', NS)).some((c) => c.type === 'Programmed' && c.status === 'True'), 'Programmed again after the revert');
    server.put(route('/fixed', 'fix-route'));
    await until(async () => (await get('/fixed/x')).status === 200, 'the next change to reach the proxy');
  });

  it('a controller restart loses no request: the proxy keeps its config and follows the new controller', async () => {
    let failures = 0;
    let sent = 0;
    let running = true;
    const load = (async () => {
      while (running) {
        const response = await get('/echo/x').catch(() => undefined);
        sent++;
        if (response?.status !== 200) failures++;
      }
    })();
    await controller!.stop();
    await new Promise((r) => setTimeout(r, 300));
    controller = await startOurController();
    for (const proxy of proxies.slice(0, 1)) await until(() => proxy.client.isConnected(), 'the proxy to reconnect');
    // A second route, so the requests under load (on /echo) keep matching.
    server.put(route('/after-restart', 'second-route'));
    await until(async () => (await sendRequest(listenerPort, { path: '/after-restart/x' })).status === 200, 'the edit through the new controller');
    running = false;
    await load;
    assert.ok(sent > 10, `requests were sent during the restart (${sent})`);
    assert.equal(failures, 0, `${failures} of ${sent} requests failed during the restart`);
  });
});
