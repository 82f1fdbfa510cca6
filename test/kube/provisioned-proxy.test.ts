/**
 * What a provisioned proxy runs with, end to end on the pod's side: ProxyParameters → the
 * Deployment the controller applies → the environment the kubelet makes from it ($(VAR)
 * expansion, $$(VAR) literal) and the container's args → the proxy's own parsing (the same
 * functions `switchboard proxy` calls at start: parseProxyArgs, shutdownPlan, the MCP session-key
 * selection). The running-proxy side of SESSION_KEY (sessions sealed and opened with it across
 * proxies) is test/kube/session-keys.e2e.test.ts.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { KubeObject } from '../../src/api/gateway/object.ts';
import { parseProxyArgs, type ProxyOptions } from '../../src/cli/commands/proxy-args.ts';
import { shutdownPlan } from '../../src/cli/commands/proxy-shutdown.ts';
import { silentLogger } from '../../src/common/logger.ts';
import { provisionObjects } from '../../src/controller/kube/provision/objects.ts';
import { resolveParameters } from '../../src/controller/kube/provision/parameters.ts';
import { GatewaySessionKeys, SessionKeySelector } from '../../src/proxy/mcp/session-keys.ts';
import type { ProxyConfig } from '../../src/ir/types.ts';
import { expand, kubeletEnv, type EnvEntry } from '../support/kubelet-env.ts';

const ENV_KEY = 'ab'.repeat(32);
const GATEWAY_KEY = 'cd'.repeat(32);
const gatewayClass = { apiVersion: 'gateway.networking.k8s.io/v1', kind: 'GatewayClass', metadata: { name: 'switchboard' }, spec: { controllerName: 'switchboard.dev/gateway-controller' } } as KubeObject;
const gateway = {
  apiVersion: 'gateway.networking.k8s.io/v1', kind: 'Gateway', metadata: { name: 'ai', namespace: 'apps', uid: 'u' },
  spec: { gatewayClassName: 'switchboard', listeners: [{ name: 'http', port: 80, protocol: 'HTTP' }], infrastructure: { parametersRef: { group: 'switchboard.dev', kind: 'ProxyParameters', name: 'p' } } },
} as KubeObject;

/** The proxy container of the Deployment provisioned for `spec`, as the kubelet starts it. */
function provisionedProxy(spec: Record<string, unknown>): { options: ProxyOptions; env: Record<string, string> } {
  const parameters = new Map([['apps/p', { apiVersion: 'switchboard.dev/v1alpha1', kind: 'ProxyParameters', metadata: { name: 'p', namespace: 'apps' }, spec } as KubeObject]]);
  const resolved = resolveParameters(gatewayClass, gateway, parameters);
  assert.ok(resolved.ok, resolved.ok ? '' : resolved.message);
  const deployment = provisionObjects(gateway, resolved.parameters, { controllerUrl: 'https://switchboard.system.svc:9978', defaultTag: '1' }).find((o) => o.kind === 'Deployment')!;
  const container = ((deployment.spec as unknown as { template: { spec: { containers: { args: string[]; env: EnvEntry[] }[] } } }).template.spec.containers)[0]!;
  const env = kubeletEnv(container.env, { 'metadata.namespace': 'apps', 'metadata.name': 'ai-7d4f-x2' });
  assert.equal(container.args[0], 'proxy');
  const options = parseProxyArgs(container.args.slice(1), env);
  assert.notEqual(options, 'help');
  return { options: options as ProxyOptions, env };
}

describe('a provisioned proxy runs with what its ProxyParameters say', () => {
  it('env: SESSION_KEY (built with $(VAR) from an earlier entry) wins over the Gateway\'s session key', () => {
    const { env } = provisionedProxy({ env: [{ name: 'KEY_HALF', value: 'ab'.repeat(16) }, { name: 'SESSION_KEY', value: '$(KEY_HALF)$(KEY_HALF)' }] });
    assert.equal(env.SESSION_KEY, ENV_KEY);
    const keys = new GatewaySessionKeys();
    keys.update({ binds: [{ listeners: [{ gateway: { namespace: 'apps', name: 'ai' }, sessionKey: GATEWAY_KEY }] }] } as unknown as ProxyConfig);
    assert.equal(new SessionKeySelector(undefined, env, keys, silentLogger).forGateway('apps/ai').toString('hex'), ENV_KEY);
    // Without it in the parameters, the Gateway's key.
    const plain = provisionedProxy({});
    assert.equal(plain.env.SESSION_KEY, undefined);
    assert.equal(new SessionKeySelector(undefined, plain.env, keys, silentLogger).forGateway('apps/ai').toString('hex'), GATEWAY_KEY);
  });
  it('env: $$(VAR) reaches the proxy as the literal $(VAR); $(VAR) of a generated entry expands', () => {
    const { env } = provisionedProxy({ env: [{ name: 'LITERAL', value: '$$(POD_NAME)' }, { name: 'WHO', value: 'proxy $(POD_NAME) of $(SWITCHBOARD_GATEWAYS)' }] });
    assert.equal(env.LITERAL, '$(POD_NAME)');
    assert.equal(env.WHO, 'proxy ai-7d4f-x2 of ai');
  });
  it('env: an entry replacing a generated one is what the proxy reads (SWITCHBOARD_CONTROLLER)', () => {
    const { options } = provisionedProxy({ env: [{ name: 'SWITCHBOARD_CONTROLLER', value: 'http://elsewhere:9978' }] });
    assert.equal(options.controller, 'http://elsewhere:9978');
  });
  it('logging: the per-module filter reaches the proxy\'s logger settings', () => {
    const { options } = provisionedProxy({ logging: { level: 'warn,mcp=debug', format: 'json' } });
    assert.equal(options.logLevel, 'warn');
    assert.equal(options.logFormat, 'json');
    assert.deepEqual(Object.fromEntries(options.logFilter?.modules ?? []), { mcp: 'debug' });
  });
  it('rawConfig: its settings reach the proxy; the typed fields win', () => {
    const { options, env } = provisionedProxy({
      logging: { level: 'error' },
      rawConfig: { logging: { level: 'debug,xds=trace', format: 'json' }, bindAddress: '::', serverName: 'controller.example', shutdown: { min: 3, max: 20 } },
    });
    assert.equal(options.logLevel, 'error');
    assert.equal(options.logFilter?.modules.size, 0);
    assert.equal(options.logFormat, 'json');
    assert.equal(options.bindAddress, '::');
    assert.equal(options.serverName, 'controller.example');
    assert.deepEqual(shutdownPlan(env), { acceptForMs: 3000, drainMs: 16_000 });
  });
  it('shutdown: the typed field wins over rawConfig\'s', () => {
    const { env } = provisionedProxy({ shutdown: { min: 1, max: 10 }, rawConfig: { shutdown: { min: 3, max: 20 } } });
    assert.deepEqual(shutdownPlan(env), { acceptForMs: 1000, drainMs: 8000 });
  });
});

describe('kubelet env expansion (Kubernetes expansion_test cases)', () => {
  const vars: Record<string, string> = { VAR_A: 'A', VAR_B: 'B', VAR_EMPTY: '' };
  const map = (name: string): string => (Object.hasOwn(vars, name) ? vars[name]! : `$(${name})`);
  const CASES: ReadonlyArray<[string, string, string]> = [
    ['a variable', '$(VAR_A)', 'A'],
    ['two, with text', 'x$(VAR_A)y$(VAR_B)z', 'xAyBz'],
    ['an escaped reference', '$$(VAR_A)', '$(VAR_A)'],
    ['an escaped dollar then a reference', '$$$(VAR_A)', '$A'],
    ['an undefined variable stays', '$(VAR_X)', '$(VAR_X)'],
    ['an empty variable', '[$(VAR_EMPTY)]', '[]'],
    ['an unclosed reference stays', '$(VAR_A', '$(VAR_A'],
    ['a lone dollar stays', 'cost $5 $', 'cost $5 $'],
  ];
  for (const [name, input, want] of CASES) it(name, () => assert.equal(expand(input, map), want));
});
