/**
 * MCP session keys in Kubernetes mode, end to end: fake API server → `switchboard controller`
 * (it creates the Gateway's Secret `gw-session-key`) → two remote proxies of the Gateway. An MCP
 * session initialised through proxy 1 is used through proxy 2 (official SDK client against a
 * server-everything upstream), and a proxy with SESSION_KEY in its environment uses that instead.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { Registry } from 'prom-client';
import { parseAllDocuments } from 'yaml';
import { parseControllerArgs } from '../../src/cli/commands/controller-args.ts';
import { startController, type RunningController } from '../../src/cli/commands/controller.ts';
import { silentLogger } from '../../src/common/logger.ts';
import { RemoteConfigClient } from '../../src/distribute/remote/client.ts';
import { ProxyRuntime } from '../../src/proxy/runtime.ts';
import { connect, startEverything, type Upstream } from '../mcp/support.ts';
import { closedPort } from '../support/fleet.ts';
import { gatewayClass } from '../support/manifests.ts';
import { FakeApiServer } from './fake-apiserver.ts';

const GW = 'gateway.networking.k8s.io/v1';
const NS = 'apps';
const TOKEN = 'proxy-sa-token';
const ENV_KEY = 'c3'.repeat(32);

async function until(check: () => boolean | Promise<boolean>, what: string, timeoutMs = 15_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await Promise.resolve(check()).catch(() => false))) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

interface Proxy {
  readonly runtime: ProxyRuntime;
  readonly client: RemoteConfigClient;
  url(): string;
}

/** A client of an existing session: the SDK skips `initialize` when the transport already has a session id. */
async function resume(url: string, sessionId: string): Promise<Client> {
  const client = new Client({ name: 'switchboard-test', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(url), { sessionId }));
  return client;
}

const echoText = async (client: Client, message: string): Promise<string> => JSON.stringify((await client.callTool({ name: 'echo', arguments: { message } })).content);

describe('Kubernetes mode: the controller-managed MCP session key, shared by a Gateway\'s proxies', () => {
  let server: FakeApiServer;
  let everything: Upstream;
  let listenerPort: number;
  let controller: RunningController;
  const proxies: Proxy[] = [];

  const startProxy = (): Proxy => {
    // Port 0: several proxies of one Gateway side by side in this process.
    const runtime = new ProxyRuntime({ logger: silentLogger, registry: new Registry(), bindAddress: '127.0.0.1', listenPort: () => 0 });
    const client = new RemoteConfigClient({
      controller: `http://127.0.0.1:${controller.ports.xds}`, token: () => Promise.resolve(TOKEN), namespace: NS, gateways: ['gw'], proxyId: `proxy-${proxies.length}`,
      runtime, logger: silentLogger, registry: new Registry(), backoff: { initialMs: 50, maxMs: 200 },
    });
    client.start();
    const proxy = { runtime, client, url: () => `http://127.0.0.1:${String(runtime.portOf(listenerPort))}/mcp` };
    proxies.push(proxy);
    return proxy;
  };
  const keyOf = (proxy: Proxy): string | undefined => proxy.runtime.current()?.binds[0]?.listeners[0]?.sessionKey;

  before(async () => {
    everything = await startEverything();
    server = await FakeApiServer.start();
    listenerPort = await closedPort();
    server.tokens.set(TOKEN, { username: `system:serviceaccount:${NS}:gw-proxy` });
    server.put({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: NS } });
    for (const doc of parseAllDocuments(gatewayClass())) server.put(doc.toJS() as Record<string, unknown>);
    server.put({ apiVersion: GW, kind: 'Gateway', metadata: { name: 'gw', namespace: NS }, spec: { gatewayClassName: 'switchboard', listeners: [{ name: 'http', port: listenerPort, protocol: 'HTTP' }] } });
    server.put({
      apiVersion: 'switchboard.dev/v1alpha1', kind: 'ProxyBackend', metadata: { name: 'tools', namespace: NS },
      spec: { mcp: { targets: [{ name: 'everything', static: { host: '127.0.0.1', port: everything.port } }], prefixMode: 'Never' } },
    });
    server.put({
      apiVersion: GW, kind: 'HTTPRoute', metadata: { name: 'mcp', namespace: NS },
      spec: { parentRefs: [{ name: 'gw' }], rules: [{ matches: [{ path: { type: 'PathPrefix', value: '/mcp' } }], backendRefs: [{ group: 'switchboard.dev', kind: 'ProxyBackend', name: 'tools' }] }] },
    });
    const options = parseControllerArgs([
      '--health-address', '127.0.0.1:0', '--metrics-address', '127.0.0.1:0', '--admin-address', '127.0.0.1:0', '--xds-address', '127.0.0.1:0', '--xds-mode', 'plaintext',
    ], {});
    if (options === 'help') throw new Error('unreachable');
    controller = await startController(options, { kubeConfig: server.kubeConfig(), logger: silentLogger, lease: { leaseDurationMs: 2000, renewDeadlineMs: 1000, retryPeriodMs: 100 } });
  });

  after(async () => {
    for (const proxy of proxies) {
      await proxy.client.close();
      await proxy.runtime.close({ graceMs: 0 });
    }
    await controller?.stop();
    await server?.close();
    await everything?.stop();
  });

  it('the controller creates the Secret and the key reaches both proxies, redacted in /config_dump', async () => {
    await until(() => server.get('v1', 'Secret', 'gw-session-key', NS) !== undefined, 'the session key Secret');
    const data = server.get('v1', 'Secret', 'gw-session-key', NS)!.data as { key: string };
    const key = Buffer.from(data.key, 'base64').toString('utf8');
    const [one, two] = [startProxy(), startProxy()];
    await until(() => keyOf(one) === key && keyOf(two) === key, 'the key in both proxies\' config');
    const dump = await (await fetch(`http://127.0.0.1:${controller.ports.admin}/config_dump`)).text();
    assert.ok(dump.includes('sessionKey') && !dump.includes(key), 'listed, but redacted');
  });

  it('an MCP session initialised through proxy 1 is used through proxy 2', async () => {
    const [one, two] = proxies as [Proxy, Proxy];
    const { client: first, transport } = await connect(one.url());
    const sessionId = transport.sessionId;
    assert.match(String(sessionId), /^sb1\./);
    assert.match(await echoText(first, 'via one'), /via one/);
    const second = await resume(two.url(), String(sessionId));
    try {
      assert.match(await echoText(second, 'via two'), /via two/);
    } finally {
      await second.close();
      await first.close();
    }
  });

  it('SESSION_KEY in a proxy\'s environment wins over the Gateway\'s key', async () => {
    // The MCP handler reads SESSION_KEY when the proxy compiles the backend: set while proxies 3 and 4 start.
    process.env.SESSION_KEY = ENV_KEY;
    const withEnv: Proxy[] = [];
    try {
      withEnv.push(startProxy(), startProxy());
      await until(() => withEnv.every((p) => keyOf(p) !== undefined), 'proxies 3 and 4\'s config');
      for (const proxy of withEnv) await (await connect(proxy.url())).client.close();
    } finally {
      delete process.env.SESSION_KEY;
    }
    const [three, four] = withEnv as [Proxy, Proxy];
    const one = proxies[0] as Proxy;
    // Sealed with SESSION_KEY: proxy 4 (same SESSION_KEY) opens it, proxy 1 (the Gateway's key) does not.
    const { client: onThree, transport } = await connect(three.url());
    try {
      assert.match(await echoText(onThree, 'env key'), /env key/);
      const onFour = await resume(four.url(), String(transport.sessionId));
      assert.match(await echoText(onFour, 'same env key'), /same env key/);
      await onFour.close();
      const onOne = await resume(one.url(), String(transport.sessionId));
      await assert.rejects(echoText(onOne, 'nope'), /404|[Ss]ession/, 'a session sealed with SESSION_KEY does not open with the Gateway\'s key');
      await onOne.close().catch(() => undefined);
    } finally {
      await onThree.close();
    }
    // And one sealed with the Gateway's key does not open where SESSION_KEY is set.
    const { client: first, transport: firstTransport } = await connect(one.url());
    try {
      const foreign = await resume(three.url(), String(firstTransport.sessionId));
      await assert.rejects(echoText(foreign, 'nope'), /404|[Ss]ession/);
      await foreign.close().catch(() => undefined);
    } finally {
      await first.close();
    }
  });
});
