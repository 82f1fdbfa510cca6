import assert from 'node:assert/strict';
import http from 'node:http';
import { describe, it } from 'node:test';
import { Registry } from 'prom-client';
import type { KubeObject, SourcedObject } from '../api/gateway/object.ts';
import { pino } from 'pino';
import { silentLogger } from '../common/logger.ts';
import type { ObjectSource, SourceSnapshot } from '../controller/sources/types.ts';
import { translate } from '../controller/translate/index.ts';
import type { ApplyResult, Distributor } from '../distribute/types.ts';
import type { ProxyConfig } from '../ir/types.ts';
import { closeServer, listen } from './address.ts';
import { createAdminServer } from './admin-server.ts';
import { ControlPlaneMetrics } from './control-plane-metrics.ts';
import { EmbeddedGateway } from './gateway.ts';
import { StatusWriter } from './status-writer.ts';
import { TranslatorThread } from './translator-thread.ts';

class ManualSource implements ObjectSource {
  emit: (snapshot: SourceSnapshot) => void = () => {};
  readonly #first: SourceSnapshot;
  constructor(first: SourceSnapshot) { this.#first = first; }
  async start(onSnapshot: (snapshot: SourceSnapshot) => void): Promise<void> {
    this.emit = onSnapshot;
    onSnapshot(this.#first);
  }
  async stop(): Promise<void> {}
}

class RecordingDistributor implements Distributor {
  readonly published: ProxyConfig[] = [];
  closedWith: number | undefined;
  readonly metricsContentType = 'text/plain';
  async start(): Promise<void> {}
  async publish(config: ProxyConfig): Promise<ApplyResult> {
    this.published.push(config);
    return { version: config.version, errors: [] };
  }
  isReady(): boolean { return this.published.length > 0; }
  async metrics(): Promise<string> { return ''; }
  async close(graceMs: number): Promise<void> { this.closedWith = graceMs; }
}

const objects = (port: number): SourcedObject[] => [
  { apiVersion: 'gateway.networking.k8s.io/v1', kind: 'GatewayClass', metadata: { name: 'switchboard' }, spec: { controllerName: 'switchboard.dev/gateway-controller' } },
  { apiVersion: 'gateway.networking.k8s.io/v1', kind: 'Gateway', metadata: { name: 'gw', namespace: 'default' }, spec: { gatewayClassName: 'switchboard', listeners: [{ name: 'http', port, protocol: 'HTTP' }] } },
].map((object: KubeObject, document) => ({ object, origin: { file: 'gw.yaml', document, line: 1 } }));

async function getJson(port: number, path: string): Promise<{ status: number; body: unknown }> {
  return new Promise((resolve, reject) => {
    http.get({ host: '127.0.0.1', port, path }, (res) => {
      let text = '';
      res.setEncoding('utf8').on('data', (c: string) => { text += c; }).on('end', () => {
        resolve({ status: res.statusCode ?? 0, body: res.headers['content-type']?.startsWith('application/json') ? JSON.parse(text) : text });
      });
    }).on('error', reject);
  });
}

describe('EmbeddedGateway', () => {
  it('publishes only new versions, counts reloads, and serves them on the admin endpoints', async () => {
    const source = new ManualSource({ objects: objects(8080), problems: [] });
    const distributor = new RecordingDistributor();
    const registry = new Registry();
    const gateway = new EmbeddedGateway({ source, translate, distributor, statusWriter: new StatusWriter(silentLogger), metrics: new ControlPlaneMetrics(registry), logger: silentLogger });
    const admin = createAdminServer(gateway);
    const { port } = await listen(admin, { host: '127.0.0.1', port: 0 });
    try {
      assert.equal((await getJson(port, '/healthz/ready')).status, 503);
      await gateway.start();
      assert.equal(distributor.published.length, 1);
      assert.deepEqual(distributor.published[0].binds.map((b) => b.port), [8080]);
      assert.equal((await getJson(port, '/healthz/ready')).status, 200);
      const dump = await getJson(port, '/config_dump');
      assert.equal((dump.body as ProxyConfig).version, distributor.published[0].version);
      const status = (await getJson(port, '/status')).body as { items: { kind: string; metadata: { name: string }; status: { conditions?: { lastTransitionTime?: string }[] } }[] };
      const gatewayStatus = status.items.find((i) => i.kind === 'Gateway');
      assert.equal(gatewayStatus?.metadata.name, 'gw');
      assert.ok(gatewayStatus?.status.conditions?.every((c) => typeof c.lastTransitionTime === 'string'));
      assert.equal((await getJson(port, '/nope')).status, 404);

      // The same objects again (a touched file): no new publish, still a successful reload.
      source.emit({ objects: objects(8080), problems: [] });
      // A broken file elsewhere: same objects, one source error.
      source.emit({ objects: objects(8080), problems: [{ severity: 'error', file: 'x.yaml', message: 'YAML syntax error' }] });
      // A duplicate and a real change.
      source.emit({ objects: [...objects(9090), ...objects(1)], problems: [] });
      // stop() drops snapshots still waiting: let the change be processed first (translation is async).
      while (distributor.published.length < 2) await new Promise((resolve) => setTimeout(resolve, 5));
      await gateway.stop(250);
      assert.deepEqual(distributor.published.map((c) => c.binds.map((b) => b.port)), [[8080], [9090]]);
      assert.equal(gateway.problems().length, 2, 'two duplicates (GatewayClass and Gateway)');
      assert.equal(distributor.closedWith, 250);

      const text = await registry.metrics();
      assert.match(text, /^switchboard_config_reloads_total\{result="success"\} 2$/m, 'the first snapshot and the touch; the broken-file snapshot was superseded while the touch was processed');
      assert.match(text, /^switchboard_config_reloads_total\{result="error"\} 1$/m, 'the latest snapshot still has duplicates');
      assert.match(text, new RegExp(`^switchboard_config_version_info\\{version="${distributor.published[1].version}"\\} 1$`, 'm'));
      assert.match(text, /^switchboard_source_errors 2$/m);
    } finally {
      await closeServer(admin);
    }
  });

  it('says once per object that ProxyModel objects are ignored, instead of dropping them silently', async () => {
    const model: SourcedObject = { object: { apiVersion: 'switchboard.dev/v1alpha1', kind: 'ProxyModel', metadata: { name: 'gpt', namespace: 'ai' }, spec: {} } };
    const source = new ManualSource({ objects: [...objects(8080), model], problems: [] });
    const lines: string[] = [];
    const logger = pino({ level: 'warn' }, { write: (line: string) => lines.push(line) });
    const gateway = new EmbeddedGateway({ source, translate, distributor: new RecordingDistributor(), statusWriter: new StatusWriter(silentLogger), metrics: new ControlPlaneMetrics(new Registry()), logger });
    await gateway.start();
    source.emit({ objects: [...objects(8080), model], problems: [] });
    await gateway.stop(10);
    const warnings = lines.map((l) => JSON.parse(l) as { msg: string; object?: string }).filter((l) => l.object === 'ProxyModel/ai/gpt');
    assert.equal(warnings.length, 1);
    assert.match(warnings[0].msg, /off \(enable with --enable-proxy-models\); object ignored/);
  });

  it('/config_dump redacts the locations the translator reports as Secret data, and only those', async () => {
    const source = new ManualSource({ objects: objects(8080), problems: [] });
    // A translator double: the real one's provenance is tested in src/controller/translate/secret-provenance.test.ts.
    const config = {
      version: 'v1', binds: [], routes: {}, backends: {},
      resolved: { apiKey: 'sk-live-0123456789', nested: { pem: 'PRIVATE', cert: 'PUBLIC' }, list: ['a', 'b'], 'a/b': 'slash-key', sameAsKey: 'sk-live-0123456789 elsewhere' },
    } as unknown as ProxyConfig;
    const secretPaths = ['/resolved/apiKey', '/resolved/nested/pem', '/resolved/list/1', '/resolved/a~1b'];
    const gateway = new EmbeddedGateway({ source, translate: () => ({ config, statuses: [], secretPaths }), distributor: new RecordingDistributor(), statusWriter: new StatusWriter(silentLogger), metrics: new ControlPlaneMetrics(new Registry()), logger: silentLogger });
    await gateway.start();
    const admin = createAdminServer(gateway);
    const { port } = await listen(admin, { host: '127.0.0.1', port: 0 });
    try {
      const dump = await getJson(port, '/config_dump');
      assert.equal(dump.status, 200);
      assert.deepEqual((dump.body as { resolved: unknown }).resolved, {
        apiKey: '[redacted]', nested: { pem: '[redacted]', cert: 'PUBLIC' }, list: ['a', '[redacted]'], 'a/b': '[redacted]', sameAsKey: 'sk-live-0123456789 elsewhere',
      });
      // The config served is untouched: only the dump is redacted.
      assert.equal((gateway.config() as unknown as { resolved: { apiKey: string } }).resolved.apiKey, 'sk-live-0123456789');
    } finally {
      await closeServer(admin);
      await gateway.stop(10);
    }
  });

  it('a translation the translator thread gives up on keeps the last good config serving, logged and counted as a failed reload', async () => {
    // The thread body answers small snapshots and hangs on bigger ones: the hang stands in for a huge config.
    const thread = new TranslatorThread({ logger: silentLogger, workerModule: new URL('./testdata/misbehaving-translator.ts', import.meta.url), timeoutMs: 300 });
    const source = new ManualSource({ objects: objects(8080), problems: [] });
    const distributor = new RecordingDistributor();
    const registry = new Registry();
    const lines: string[] = [];
    const logger = pino({ level: 'error' }, { write: (line: string) => lines.push(line) });
    const gateway = new EmbeddedGateway({
      source, distributor, statusWriter: new StatusWriter(silentLogger), metrics: new ControlPlaneMetrics(registry), logger,
      translate: (objs, options) => thread.translate(objs, objs.length > 2 ? { controllerName: 'hang' } : options),
    });
    try {
      await gateway.start();
      assert.equal(gateway.config()?.version, 'n2');
      const extra: SourcedObject = { object: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'big', namespace: 'default' } } };
      source.emit({ objects: [...objects(8080), extra], problems: [] });
      for (let waited = 0; !lines.some((l) => l.includes('translation took longer than 0.3 s')); waited += 20) {
        assert.ok(waited < 10_000, `no give-up logged: ${lines.join('')}`);
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      assert.equal(gateway.config()?.version, 'n2', 'the last good config keeps serving');
      assert.equal(distributor.published.length, 1);
      assert.match(lines.join(''), /still serving the previous config/);
      assert.match(await registry.metrics(), /^switchboard_config_reloads_total\{result="error"\} 1$/m);
      // The thread was restarted: the next snapshot translates again.
      source.emit({ objects: objects(8080).slice(0, 1), problems: [] });
      while (distributor.published.length < 2) await new Promise((resolve) => setTimeout(resolve, 20));
      assert.equal(gateway.config()?.version, 'n1');
    } finally {
      await gateway.stop(10);
      await thread.close();
    }
  });

  it('an IR that fails validation (a translator bug) is not published: the last good config keeps serving, logged and counted', async () => {
    const source = new ManualSource({ objects: objects(8080), problems: [] });
    const distributor = new RecordingDistributor();
    const registry = new Registry();
    const lines: string[] = [];
    const logger = pino({ level: 'error' }, { write: (line: string) => lines.push(line) });
    let broken = false;
    const gateway = new EmbeddedGateway({
      source, distributor, statusWriter: new StatusWriter(silentLogger), metrics: new ControlPlaneMetrics(registry), logger,
      translate: (objs, options) => {
        const result = translate(objs, options);
        if (!broken) return result;
        // A route whose rule names a backend the config does not hold: the proxy would misroute it.
        const route = { key: 'default/r', namespace: 'default', name: 'r', creationTimestamp: '2026-01-01T00:00:00Z', rules: [{ key: 'default/r/0', matches: [], filters: [], backends: [{ backendKey: 'default/missing', weight: 1, filters: [] }] }] };
        const config: ProxyConfig = { ...result.config, version: 'broken', routes: { 'default/r': route } };
        return { ...result, config };
      },
    });
    try {
      await gateway.start();
      const good = gateway.config()?.version;
      broken = true;
      source.emit({ objects: objects(9090), problems: [] });
      for (let waited = 0; !lines.some((l) => l.includes('translator produced an invalid config')); waited += 20) {
        assert.ok(waited < 5_000, `nothing logged: ${lines.join('')}`);
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      assert.equal(gateway.config()?.version, good);
      assert.equal(distributor.published.length, 1);
      assert.match(lines.join(''), /default\/missing/);
      assert.match(await registry.metrics(), /^switchboard_config_reloads_total\{result="error"\} 1$/m);
    } finally {
      await gateway.stop(10);
    }
  });
});
