/**
 * Provisioning end to end (issue 16): fake API server → `switchboard controller` (in-process, the
 * real KubeSource and leader Lease). A Gateway of our class gets its Deployment, Service and
 * ServiceAccount by server-side apply; an overlay edit in its ProxyParameters changes the
 * Deployment; taking the PDB out of the parameters deletes it; deleting the Gateway removes
 * everything (owner references → the fake server's garbage collection).
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { parseControllerArgs } from '../../src/cli/commands/controller-args.ts';
import { startController, type RunningController } from '../../src/cli/commands/controller.ts';
import { silentLogger } from '../../src/common/logger.ts';
import { FIELD_MANAGER } from '../../src/controller/kube/provision/objects.ts';
import { FakeApiServer } from './fake-apiserver.ts';
import type { ProxyConfig } from '../../src/ir/types.ts';
import { GatewaySessionKeys, SessionKeySelector } from '../../src/proxy/mcp/session-keys.ts';
import { kubeletEnv } from '../support/kubelet-env.ts';

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

type Condition = { type: string; status: string; reason: string; message: string };
type Container = { name: string; image: string; env: { name: string; value?: string }[] };
const containersOf = (deployment: Record<string, unknown> | undefined): Container[] =>
  ((deployment?.spec as { template?: { spec?: { containers?: Container[] } } } | undefined)?.template?.spec?.containers) ?? [];

function parameters(deploymentSpec: Record<string, unknown>, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return { apiVersion: SB, kind: 'ProxyParameters', metadata: { name: 'gw-params', namespace: NS }, spec: { image: { tag: 'v1' }, deployment: { spec: deploymentSpec }, ...extra } };
}

describe('Kubernetes mode: provisioning a Gateway\'s proxy workload', () => {
  let server: FakeApiServer;
  let controller: RunningController;

  before(async () => {
    server = await FakeApiServer.start();
    server.put({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: NS } });
    server.put({ apiVersion: GW, kind: 'GatewayClass', metadata: { name: 'switchboard' }, spec: { controllerName: 'switchboard.dev/gateway-controller' } });
    server.put({ apiVersion: GW, kind: 'GatewayClass', metadata: { name: 'other' }, spec: { controllerName: 'example.com/other' } });
    // env: SESSION_KEY built from an earlier entry with $(VAR) (the kubelet expands it in the pod).
    server.put(parameters({ replicas: 2 }, { podDisruptionBudget: { spec: { minAvailable: 1 } }, env: [{ name: 'KEY_HALF', value: 'ef'.repeat(16) }, { name: 'SESSION_KEY', value: '$(KEY_HALF)$(KEY_HALF)' }] }));
    server.put({
      apiVersion: GW, kind: 'Gateway', metadata: { name: 'gw', namespace: NS },
      spec: { gatewayClassName: 'switchboard', listeners: [{ name: 'http', port: 8080, protocol: 'HTTP' }], infrastructure: { parametersRef: { group: 'switchboard.dev', kind: 'ProxyParameters', name: 'gw-params' } } },
    });
    server.put({
      apiVersion: GW, kind: 'Gateway', metadata: { name: 'broken', namespace: NS },
      spec: { gatewayClassName: 'switchboard', listeners: [{ name: 'http', port: 8081, protocol: 'HTTP' }], infrastructure: { parametersRef: { group: 'switchboard.dev', kind: 'ProxyParameters', name: 'missing' } } },
    });
    server.put({ apiVersion: GW, kind: 'Gateway', metadata: { name: 'theirs', namespace: NS }, spec: { gatewayClassName: 'other', listeners: [{ name: 'http', port: 80, protocol: 'HTTP' }] } });
    const options = parseControllerArgs([
      '--health-address', '127.0.0.1:0', '--metrics-address', '127.0.0.1:0', '--admin-address', '127.0.0.1:0', '--xds-address', '127.0.0.1:0',
      '--xds-mode', 'plaintext', '--leader-election-namespace', 'switchboard-system',
    ], {});
    if (options === 'help') throw new Error('unreachable');
    controller = await startController(options, {
      kubeConfig: server.kubeConfig(), logger: silentLogger, lease: { leaseDurationMs: 2000, renewDeadlineMs: 1000, retryPeriodMs: 100 },
      provision: { controllerUrl: 'http://switchboard.switchboard-system.svc:9978', defaultTag: 'test', retryMs: 100 },
    });
  });
  after(async () => {
    await controller.stop();
    await server.close();
  });

  it('applies the Deployment, Service, ServiceAccount and PDB of a Gateway of our class, owned by it', async () => {
    await until(() => server.get('policy/v1', 'PodDisruptionBudget', 'gw', NS) !== undefined, 'the PDB');
    const gateway = server.get(GW, 'Gateway', 'gw', NS)!;
    const deployment = server.get('apps/v1', 'Deployment', 'gw', NS)!;
    assert.equal((deployment.spec as { replicas: number }).replicas, 2, 'the overlay sets the replicas');
    const [proxy] = containersOf(deployment);
    assert.equal(proxy!.image, 'ghcr.io/switchboard-dev/switchboard:v1');
    assert.deepEqual(proxy!.env.find((e) => e.name === 'SWITCHBOARD_CONTROLLER'), { name: 'SWITCHBOARD_CONTROLLER', value: 'http://switchboard.switchboard-system.svc:9978' });
    const service = server.get('v1', 'Service', 'gw', NS)!;
    assert.deepEqual((service.spec as { ports: unknown[] }).ports, [{ name: 'http', port: 8080, targetPort: 8080, protocol: 'TCP' }]);
    assert.ok(server.get('v1', 'ServiceAccount', 'gw', NS));
    for (const object of [deployment, service]) {
      const meta = object.metadata as { ownerReferences: { uid: string }[]; managedFields: { manager: string; operation: string }[] };
      assert.deepEqual(meta.ownerReferences.map((o) => o.uid), [(gateway.metadata as { uid: string }).uid]);
      assert.ok(meta.managedFields.some((m) => m.manager === FIELD_MANAGER && m.operation === 'Apply'), 'written by server-side apply');
    }
    assert.equal(server.get('apps/v1', 'Deployment', 'theirs', NS), undefined, 'another class\'s Gateway is not provisioned');
  });

  it('env: the applied Deployment gives its proxies the parameters\' SESSION_KEY, which wins over the Gateway\'s key', async () => {
    await until(() => server.get('apps/v1', 'Deployment', 'gw', NS) !== undefined, 'the Deployment');
    const [proxy] = containersOf(server.get('apps/v1', 'Deployment', 'gw', NS)!);
    const env = kubeletEnv(proxy!.env, { 'metadata.namespace': NS, 'metadata.name': 'gw-0' });
    assert.equal(env.SESSION_KEY, 'ef'.repeat(32));
    const gatewayKeys = new GatewaySessionKeys();
    gatewayKeys.update({ binds: [{ listeners: [{ gateway: { namespace: NS, name: 'gw' }, sessionKey: '01'.repeat(32) }] }] } as unknown as ProxyConfig);
    assert.equal(new SessionKeySelector(undefined, env, gatewayKeys, silentLogger).forGateway(`${NS}/gw`).toString('hex'), 'ef'.repeat(32));
  });

  it('writes ProxyParameters Accepted/ResolvedRefs, and Accepted=False InvalidParameters on a Gateway whose parameters are missing', async () => {
    const conditions = (object: Record<string, unknown> | undefined): Condition[] => ((object?.status as { conditions?: Condition[] } | undefined)?.conditions) ?? [];
    await until(() => conditions(server.get(SB, 'ProxyParameters', 'gw-params', NS)).some((c) => c.type === 'ResolvedRefs'), 'the ProxyParameters status');
    assert.deepEqual(conditions(server.get(SB, 'ProxyParameters', 'gw-params', NS)).map((c) => [c.type, c.status, c.reason]), [['Accepted', 'True', 'Accepted'], ['ResolvedRefs', 'True', 'ResolvedRefs']]);
    await until(() => conditions(server.get(GW, 'Gateway', 'broken', NS)).some((c) => c.reason === 'InvalidParameters'), 'the broken Gateway\'s status');
    const accepted = conditions(server.get(GW, 'Gateway', 'broken', NS)).find((c) => c.type === 'Accepted')!;
    assert.equal(accepted.status, 'False');
    assert.match(accepted.message, /ProxyParameters apps\/missing not found/);
    assert.equal(server.get('apps/v1', 'Deployment', 'broken', NS), undefined, 'nothing is provisioned for it');
    assert.equal(conditions(server.get(GW, 'Gateway', 'gw', NS)).find((c) => c.type === 'Accepted')?.status, 'True');
  });

  it('a snapshot that changes nothing for the Gateway applies nothing', async () => {
    await until(() => controller.provisioner.settled(), 'provisioning settled');
    const applies = (): number => server.requests.filter((r) => r.method === 'PATCH' && r.contentType === 'application/apply-patch+yaml' && r.query.fieldManager === FIELD_MANAGER).length;
    const before = applies();
    server.put({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'unrelated', namespace: NS }, data: { a: 'b' } });
    await new Promise((r) => setTimeout(r, 300));
    assert.equal(applies(), before);
  });

  it('an overlay edit changes the Deployment; a PDB taken out of the parameters is deleted', async () => {
    server.put(parameters({ replicas: 3, template: { spec: { containers: [{ name: 'sidecar', image: 'busybox:1' }] } } }));
    await until(() => containersOf(server.get('apps/v1', 'Deployment', 'gw', NS)).length === 2, 'the sidecar');
    const deployment = server.get('apps/v1', 'Deployment', 'gw', NS)!;
    assert.equal((deployment.spec as { replicas: number }).replicas, 3);
    assert.deepEqual(containersOf(deployment).map((c) => c.name), ['proxy', 'sidecar']);
    await until(() => server.get('policy/v1', 'PodDisruptionBudget', 'gw', NS) === undefined, 'the PDB deleted');
  });

  it('a Gateway delete removes its workload', async () => {
    server.remove(GW, 'Gateway', 'gw', NS);
    for (const [apiVersion, kind] of [['apps/v1', 'Deployment'], ['v1', 'Service'], ['v1', 'ServiceAccount']] as const) {
      assert.equal(server.get(apiVersion, kind, 'gw', NS), undefined, `${kind} removed`);
    }
    // And the controller does not bring them back.
    await new Promise((r) => setTimeout(r, 300));
    assert.equal(server.get('apps/v1', 'Deployment', 'gw', NS), undefined);
  });
});

describe('Kubernetes mode: provisioning with a tls controller CA', () => {
  it('holds the Gateway until the CA Secret is visible, then copies it beside the workload', async () => {
    const server = await FakeApiServer.start();
    server.put({ apiVersion: GW, kind: 'GatewayClass', metadata: { name: 'switchboard' }, spec: { controllerName: 'switchboard.dev/gateway-controller' } });
    server.put({ apiVersion: GW, kind: 'Gateway', metadata: { name: 'gw', namespace: NS }, spec: { gatewayClassName: 'switchboard', listeners: [{ name: 'http', port: 8080, protocol: 'HTTP' }] } });
    const options = parseControllerArgs(['--health-address', '127.0.0.1:0', '--metrics-address', '127.0.0.1:0', '--admin-address', '127.0.0.1:0', '--xds-address', '127.0.0.1:0', '--xds-mode', 'plaintext', '--disable-leader-election'], {});
    if (options === 'help') throw new Error('unreachable');
    const controller = await startController(options, { kubeConfig: server.kubeConfig(), logger: silentLogger, provision: { controllerUrl: 'https://sb:9978', defaultTag: 't', retryMs: 100, caSecret: { namespace: 'switchboard-system', name: 'xds-tls' } } });
    try {
      const accepted = (): Condition | undefined => ((server.get(GW, 'Gateway', 'gw', NS)?.status as { conditions?: Condition[] } | undefined)?.conditions ?? []).find((c) => c.type === 'Accepted');
      await until(() => accepted()?.reason === 'InvalidParameters', 'the Gateway held');
      assert.match(accepted()!.message, /CA Secret switchboard-system\/xds-tls/);
      assert.equal(server.get('apps/v1', 'Deployment', 'gw', NS), undefined, 'no proxy that could not verify the controller');
      server.put({ apiVersion: 'v1', kind: 'Secret', metadata: { name: 'xds-tls', namespace: 'switchboard-system' }, data: { 'ca.crt': Buffer.from('PEM').toString('base64') } });
      await until(() => server.get('apps/v1', 'Deployment', 'gw', NS) !== undefined, 'the Deployment');
      assert.deepEqual(server.get('v1', 'ConfigMap', 'gw-controller-ca', NS)?.data, { 'ca.crt': 'PEM' });
      assert.ok(containersOf(server.get('apps/v1', 'Deployment', 'gw', NS))[0]!.env.some((e) => e.name === 'SWITCHBOARD_CA_FILE'));
      await until(() => accepted()?.status === 'True', 'the Gateway accepted again');
    } finally {
      await controller.stop();
      await server.close();
    }
  });
});

describe('Kubernetes mode: provisioning retries', () => {
  it('a failed apply is retried', async () => {
    const server = await FakeApiServer.start();
    server.put({ apiVersion: GW, kind: 'GatewayClass', metadata: { name: 'switchboard' }, spec: { controllerName: 'switchboard.dev/gateway-controller' } });
    server.put({ apiVersion: GW, kind: 'Gateway', metadata: { name: 'gw', namespace: NS }, spec: { gatewayClassName: 'switchboard', listeners: [{ name: 'http', port: 8080, protocol: 'HTTP' }] } });
    server.failNext('PATCH', /\/deployments\/gw$/, 500, 2);
    const options = parseControllerArgs(['--health-address', '127.0.0.1:0', '--metrics-address', '127.0.0.1:0', '--admin-address', '127.0.0.1:0', '--xds-address', '127.0.0.1:0', '--xds-mode', 'plaintext', '--disable-leader-election'], {});
    if (options === 'help') throw new Error('unreachable');
    const controller = await startController(options, { kubeConfig: server.kubeConfig(), logger: silentLogger, provision: { controllerUrl: 'http://sb:9978', defaultTag: 't', retryMs: 100 } });
    try {
      await until(() => server.get('apps/v1', 'Deployment', 'gw', NS) !== undefined, 'the Deployment after two failures');
      assert.equal(server.requests.filter((r) => r.method === 'PATCH' && r.path.endsWith('/deployments/gw')).length, 3);
    } finally {
      await controller.stop();
      await server.close();
    }
  });
});
