/**
 * `switchboard proxy` as a process, started with the args and environment of the pod the
 * controller provisions (the kubelet's expansion of its env, test/support/kubelet-env.ts): the
 * per-module log filter from `logging.level` governs what it logs, and `mesh` is checked and
 * exposed on /metrics; a malformed mesh setting stops it (exit 1) rather than running on it.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import type { KubeObject } from '../../src/api/gateway/object.ts';
import { provisionObjects } from '../../src/controller/kube/provision/objects.ts';
import { CLI, freePort, REPO_ROOT, tempDir } from '../cli/harness.ts';
import { kubeletEnv, type EnvEntry } from '../support/kubelet-env.ts';

const gateway = {
  apiVersion: 'gateway.networking.k8s.io/v1', kind: 'Gateway', metadata: { name: 'ai', namespace: 'apps', uid: 'u' },
  spec: { gatewayClassName: 'switchboard', listeners: [{ name: 'http', port: 80, protocol: 'HTTP' }] },
} as KubeObject;

interface Run { readonly code: number | null; readonly lines: { level: number; module?: string; msg: string }[]; readonly metrics: string | undefined }

/** Starts the provisioned proxy against a closed controller port, reads /metrics, stops it. */
async function runProvisioned(spec: Record<string, unknown>, envOverrides: Record<string, string> = {}): Promise<Run> {
  const deployment = provisionObjects(gateway, { classLevel: undefined, gatewayLevel: spec }, { controllerUrl: 'http://unused:9978', defaultTag: '1' }).find((o) => o.kind === 'Deployment')!;
  const container = (deployment.spec as unknown as { template: { spec: { containers: { args: string[]; env: EnvEntry[] }[] } } }).template.spec.containers[0]!;
  const dir = tempDir('provisioned-proxy');
  const token = path.join(dir, 'token');
  fs.writeFileSync(token, 'token\n');
  const [metricsPort, closed] = [await freePort(), await freePort()];
  const env = { ...kubeletEnv(container.env, { 'metadata.namespace': 'apps', 'metadata.name': 'ai-0' }), SWITCHBOARD_CONTROLLER: `http://127.0.0.1:${closed}`, SWITCHBOARD_TOKEN_FILE: token, ...envOverrides };
  // The pod's args, with the metrics port moved off 15020 (later flags win).
  const child = spawn(process.execPath, [CLI, ...container.args, '--metrics-address', `127.0.0.1:${metricsPort}`, '--bind-address', '127.0.0.1'], { cwd: REPO_ROOT, env: { PATH: process.env.PATH, ...env }, stdio: ['ignore', 'pipe', 'inherit'] });
  let out = '';
  child.stdout.on('data', (chunk: Buffer) => { out += chunk.toString(); });
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  let metrics: string | undefined;
  try {
    const deadline = Date.now() + 15_000;
    for (;;) {
      const done = await Promise.race([exited.then(() => true), new Promise<false>((r) => setTimeout(() => r(false), 50))]);
      if (done) break;
      metrics = await fetch(`http://127.0.0.1:${metricsPort}/metrics`).then((r) => r.text(), () => undefined);
      if (metrics !== undefined) break;
      if (Date.now() > deadline) throw new Error(`the proxy did not start: ${out}`);
    }
    // The first dial of the closed controller port fails at once (what the xds module logs as a warning).
    if (metrics !== undefined) await new Promise((r) => setTimeout(r, 1500));
    child.kill('SIGINT');
    const code = await exited;
    return { code, metrics, lines: out.split('\n').filter((l) => l.startsWith('{')).map((l) => JSON.parse(l) as Run['lines'][number]) };
  } finally {
    child.kill('SIGKILL');
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

describe('a provisioned proxy process', () => {
  it('logging.level "error,xds=debug": the xds module logs its warnings, the rest only errors', async () => {
    const run = await runProvisioned({ logging: { level: 'error,xds=debug', format: 'json' } });
    const xds = run.lines.filter((l) => l.module === 'xds');
    assert.ok(xds.some((l) => l.level === 40 && l.msg.includes('config stream failed')), 'the xds warning is logged, marked with its module');
    assert.ok(!run.lines.some((l) => l.msg === 'switchboard proxy starting'), 'the process-level info line is not (level error)');
  });
  it('without the module entry, the same warning is not logged at level error', async () => {
    const run = await runProvisioned({ logging: { level: 'error', format: 'json' } });
    assert.ok(!run.lines.some((l) => l.msg.includes('config stream failed')));
  });
  it('mesh: exposed as switchboard_proxy_mesh_info', async () => {
    const run = await runProvisioned({ mesh: { enabled: true, trustDomain: 'corp.local', additionalTrustDomains: ['partner.local'], clusterId: 'east' } });
    assert.match(run.metrics ?? '', /switchboard_proxy_mesh_info\{enabled="true",trust_domain="corp.local",trust_domains="corp.local,partner.local",cluster_id="east",network="",ca_address="https:\/\/istiod.istio-system.svc:15012"\} 1/);
  });
  it('a malformed mesh setting stops the proxy (exit 1)', async () => {
    const run = await runProvisioned({ mesh: { enabled: true } }, { MESH_TRUST_DOMAIN: 'Not Valid', SWITCHBOARD_LOG_FILTER: 'info' });
    assert.equal(run.code, 1);
    assert.ok(run.lines.some((l) => l.msg === 'invalid mesh settings'));
  });
});
