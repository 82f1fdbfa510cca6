/**
 * The ProxyModel gate in Kubernetes mode: the chart's `proxyModels.enabled` reaches the controller
 * as `SWITCHBOARD_PROXY_MODELS_ENABLED` (chart/templates/deployment.yaml); the controller honours it
 * (and `--enable-proxy-models`, as `run` does). Fake API server → controller → the ProxyModel's
 * status written back: Accepted=True with the API on, "disabled" with it off. Also: the model
 * catalog (ProxyParameters modelCatalog) is read from the watch in this mode too.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { parseAllDocuments } from 'yaml';
import { parseControllerArgs } from '../../src/cli/commands/controller-args.ts';
import { startController, type RunningController } from '../../src/cli/commands/controller.ts';
import { silentLogger } from '../../src/common/logger.ts';
import { closedPort } from '../support/fleet.ts';
import { gatewayClass } from '../support/manifests.ts';
import { FakeApiServer } from './fake-apiserver.ts';

const GW = 'gateway.networking.k8s.io/v1';
const SB = 'switchboard.dev/v1alpha1';
const NS = 'apps';

async function until(check: () => boolean, what: string, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

type Condition = { type: string; status: string; reason?: string; message?: string };
const modelAccepted = (server: FakeApiServer): Condition | undefined =>
  ((server.get(SB, 'ProxyModel', 'gpt-4o', NS)?.status as { parents?: { conditions: Condition[] }[] } | undefined)?.parents?.[0]?.conditions ?? []).find((c) => c.type === 'Accepted');

describe('Kubernetes mode: the ProxyModel API gate (chart value proxyModels.enabled)', () => {
  let server: FakeApiServer;
  let controller: RunningController | undefined;

  const start = async (argv: string[], env: NodeJS.ProcessEnv): Promise<RunningController> => {
    const options = parseControllerArgs([
      '--health-address', '127.0.0.1:0', '--metrics-address', '127.0.0.1:0', '--admin-address', '127.0.0.1:0', '--xds-address', `127.0.0.1:${await closedPort()}`,
      '--xds-mode', 'plaintext', '--disable-leader-election', ...argv,
    ], env);
    if (options === 'help') throw new Error('unreachable');
    return startController(options, { kubeConfig: server.kubeConfig(), logger: silentLogger });
  };

  before(async () => {
    server = await FakeApiServer.start({ bookmarkIntervalMs: 200 });
    server.put({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: NS } });
    for (const doc of parseAllDocuments(gatewayClass())) server.put(doc.toJS() as Record<string, unknown>);
    server.put({ apiVersion: GW, kind: 'Gateway', metadata: { name: 'gw', namespace: NS }, spec: { gatewayClassName: 'switchboard', listeners: [{ name: 'http', port: await closedPort(), protocol: 'HTTP' }] } });
    server.put({
      apiVersion: GW, kind: 'HTTPRoute', metadata: { name: 'models', namespace: NS },
      spec: { parentRefs: [{ name: 'gw' }], rules: [{ matches: [{ path: { type: 'PathPrefix', value: '/v1' } }], backendRefs: [{ group: 'switchboard.dev', kind: 'ProxyModel', name: '*' }] }] },
    });
    server.put({ apiVersion: SB, kind: 'ProxyModel', metadata: { name: 'gpt-4o', namespace: NS }, spec: { parentRefs: [{ group: 'gateway.networking.k8s.io', kind: 'HTTPRoute', name: 'models' }], provider: 'VendorA' } });
  });

  after(async () => {
    await controller?.stop();
    await server.close();
  });

  const rows: { name: string; argv: string[]; env: NodeJS.ProcessEnv; status: string; message?: RegExp }[] = [
    { name: 'off by default: the model says the API is disabled', argv: [], env: {}, status: 'False', message: /ProxyModel API is disabled/ },
    { name: 'SWITCHBOARD_PROXY_MODELS_ENABLED=true (the chart value) serves it', argv: [], env: { SWITCHBOARD_PROXY_MODELS_ENABLED: 'true' }, status: 'True' },
    { name: 'SWITCHBOARD_PROXY_MODELS_ENABLED=false turns it off again', argv: [], env: { SWITCHBOARD_PROXY_MODELS_ENABLED: 'false' }, status: 'False', message: /ProxyModel API is disabled/ },
    { name: '--enable-proxy-models serves it', argv: ['--enable-proxy-models'], env: {}, status: 'True' },
  ];
  it('the model catalog is read from the watch: the models rule carries the Gateway\'s ConfigMap entries, and follows an edit', async () => {
    await controller?.stop();
    controller = await start(['--enable-proxy-models'], {});
    const catalog = (): unknown => (controller!.gateway.config()?.backends['models/apps/models/rule/0'] as { ai?: { catalog?: unknown } } | undefined)?.ai?.catalog;
    const configMap = (ids: string[]) => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'vendor-models', namespace: NS }, data: { 'catalog.json': JSON.stringify({ data: ids.map((id) => ({ id, owned_by: 'openai' })) }) } });
    server.put(configMap(['gpt-4o', 'gpt-4o-mini']));
    server.put({ apiVersion: SB, kind: 'ProxyParameters', metadata: { name: 'gw-params', namespace: NS }, spec: { modelCatalog: { sources: [{ configMap: { name: 'vendor-models' } }] } } });
    const gateway = server.get(GW, 'Gateway', 'gw', NS)!;
    server.put({ ...gateway, spec: { ...(gateway.spec as object), infrastructure: { parametersRef: { group: 'switchboard.dev', kind: 'ProxyParameters', name: 'gw-params' } } } });
    await until(() => JSON.stringify(catalog()) === JSON.stringify([{ id: 'gpt-4o', ownedBy: 'openai' }, { id: 'gpt-4o-mini', ownedBy: 'openai' }]), 'the catalog in the config')
      .catch((err: Error) => { throw new Error(`${err.message}; got ${JSON.stringify(catalog())}`); });
    server.put(configMap(['o3']));
    await until(() => JSON.stringify(catalog()) === JSON.stringify([{ id: 'o3', ownedBy: 'openai' }]), 'the edited catalog')
      .catch((err: Error) => { throw new Error(`${err.message}; got ${JSON.stringify(catalog())}`); });
  });

  for (const row of rows) {
    it(row.name, async () => {
      await controller?.stop();
      controller = await start(row.argv, row.env);
      await until(() => modelAccepted(server)?.status === row.status, `ProxyModel Accepted=${row.status}`)
        .catch((err: Error) => { throw new Error(`${err.message}; got ${JSON.stringify(modelAccepted(server))}`); });
      if (row.message) assert.match(modelAccepted(server)!.message ?? '', row.message);
    });
  }
});
