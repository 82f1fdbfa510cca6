import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { KubeObject } from '../../api/gateway/object.ts';
import { silentLogger, type Logger } from '../../common/logger.ts';
import type { SourceSnapshot } from '../../controller/sources/types.ts';
import type { FedTranslation, Translation } from '../../embedded/gateway.ts';
import { cluster, route as benchRoute, type ClusterShape } from '../../../bench/control-plane-cluster.ts';
import { FakeApiServer } from '../../../test/kube/fake-apiserver.ts';
import { KubeClient } from '../../controller/kube/client.ts';
import { KubeSource } from '../../controller/kube/kube-source.ts';
import type { ObjectDelta } from '../../controller/translate/incremental.ts';
import { translate as translateWhole } from '../../controller/translate/index.ts';
import { TranslatorThread } from '../../embedded/translator-thread.ts';
import { ControllerFeed } from './controller-feed.ts';

const route = (name: string): KubeObject => ({ apiVersion: 'gateway.networking.k8s.io/v1', kind: 'HTTPRoute', metadata: { name, namespace: 'apps' } });
const snapshot = (...objects: KubeObject[]): SourceSnapshot => ({ objects: objects.map((object) => ({ object })), problems: [] });
const translation = (objects: readonly KubeObject[]): Translation => ({ config: { version: objects.map((o) => o.metadata.name).join(','), binds: [], routes: {}, backends: {} }, statuses: [] });

/** A source whose snapshots the test pushes; the first one is delivered during start(), as KubeSource does. */
function pushSource(first: SourceSnapshot): { source: { start(on: (s: SourceSnapshot) => void): Promise<void>; stop(): Promise<void> }; push(s: SourceSnapshot): void } {
  let on: ((s: SourceSnapshot) => void) | undefined;
  return {
    source: { start: (callback) => { on = callback; callback(first); return Promise.resolve(); }, stop: () => Promise.resolve() },
    push: (s) => on?.(s),
  };
}

describe('ControllerFeed', () => {
  it('resolves start() once the first snapshot is translated and delivered', async () => {
    const { source } = pushSource(snapshot(route('a')));
    const delivered: (FedTranslation | Error)[] = [];
    const feed = new ControllerFeed({ source, translate: translation, logger: silentLogger });
    await feed.start((r) => delivered.push(r));
    assert.equal(delivered.length, 1);
    assert.equal((delivered[0] as FedTranslation).config.version, 'a');
    assert.equal((delivered[0] as FedTranslation).sourceErrors, 0);
  });

  it('translates only the newest of the snapshots that arrived during a translation', async () => {
    const { source, push } = pushSource(snapshot(route('a')));
    const translated: string[] = [];
    let release: () => void = () => {};
    let gate: Promise<void> = Promise.resolve();
    const translate = async (objects: readonly KubeObject[]): Promise<Translation> => {
      await gate;
      translated.push(objects.map((o) => o.metadata.name).join(','));
      return translation(objects);
    };
    const feed = new ControllerFeed({ source, translate, logger: silentLogger });
    const delivered: (FedTranslation | Error)[] = [];
    await feed.start((r) => delivered.push(r));
    gate = new Promise((resolve) => { release = resolve; });
    push(snapshot(route('b')));
    push(snapshot(route('c')));
    push(snapshot(route('d')));
    release();
    for (let i = 0; i < 100 && delivered.length < 3; i++) await new Promise((r) => setTimeout(r, 5));
    await feed.stop();
    assert.deepEqual(translated, ['a', 'b', 'd'], 'b was being translated when c and d came; c was replaced by d');
    assert.deepEqual(delivered.map((r) => (r as FedTranslation).config.version), ['a', 'b', 'd']);
  });

  it('delivers a failed translation as an Error (the gateway keeps the previous config)', async () => {
    const { source } = pushSource(snapshot(route('a')));
    const delivered: (FedTranslation | Error)[] = [];
    const feed = new ControllerFeed({ source, translate: () => Promise.reject(new Error('over a configuration limit')), logger: silentLogger });
    await feed.start((r) => delivered.push(r));
    assert.ok(delivered[0] instanceof Error);
    assert.match((delivered[0] as Error).message, /over a configuration limit/);
  });

  it('logs an ignored ProxyModel once while the API is off, never when it is on', async () => {
    const model: KubeObject = { apiVersion: 'switchboard.dev/v1alpha1', kind: 'ProxyModel', metadata: { name: 'm', namespace: 'apps' } };
    for (const proxyModels of [false, true]) {
      const warnings: unknown[] = [];
      const logger = { ...silentLogger, warn: (fields: unknown) => void warnings.push(fields) } as unknown as Logger;
      const { source, push } = pushSource(snapshot(model, route('a')));
      const feed = new ControllerFeed({ source, translate: translation, logger, proxyModels });
      await feed.start(() => {});
      push(snapshot(model, route('b')));
      await feed.stop();
      assert.equal(warnings.length, proxyModels ? 0 : 1, `proxyModels ${proxyModels}`);
    }
  });

  it('the cluster\'s deltas through the translator thread translate as the whole snapshots do', async () => {
    const shape: ClusterShape = { routes: 40, policies: 8, namespaces: 2, servicesPerNamespace: 2, ports: [18001, 18002], upstream: { host: '127.0.0.1', port: 9 } };
    const server = await FakeApiServer.start();
    for (const object of cluster(shape)) server.put(object as unknown as Record<string, unknown>);
    const client = new KubeClient(server.kubeConfig());
    const thread = new TranslatorThread({ logger: silentLogger });
    const deltas: (ObjectDelta | undefined)[] = [];
    const checked: string[] = [];
    const translate = async (objects: readonly KubeObject[], options: { controllerName?: string }, delta?: ObjectDelta): Promise<Translation> => {
      deltas.push(delta);
      const result = await thread.translate(objects, options, delta);
      const whole = translateWhole(objects, options);
      assert.equal(result.config.version, whole.config.version, 'the same config version as a whole translation');
      assert.deepEqual(result.config, whole.config);
      assert.deepEqual(result.statuses, whole.statuses);
      checked.push(result.config.version);
      return result;
    };
    const feed = new ControllerFeed({ source: new KubeSource({ client, logger: silentLogger, debounceMs: 10 }), translate, logger: silentLogger, controllerName: 'switchboard.dev/gateway-controller' });
    try {
      const delivered: (FedTranslation | Error)[] = [];
      await feed.start((r) => delivered.push(r));
      const edits: (() => void)[] = [
        () => server.put(benchRoute(shape, 4, '/edited') as unknown as Record<string, unknown>),
        () => server.remove('gateway.networking.k8s.io/v1', 'HTTPRoute', 'r6', 'team-0'),
        () => server.put(benchRoute(shape, 6) as unknown as Record<string, unknown>),
        () => server.remove('switchboard.dev/v1alpha1', 'ProxyPolicy', 'p0', 'team-0'),
      ];
      for (const edit of edits) {
        const count = delivered.length;
        edit();
        for (let i = 0; i < 400 && delivered.length === count; i++) await new Promise((r) => setTimeout(r, 10));
        assert.ok(delivered.length > count, 'a translation after the edit');
      }
      assert.deepEqual(delivered.filter((r) => r instanceof Error).map((e) => e.message.slice(0, 2000)), [], 'no translation failed');
      assert.equal(deltas[0], undefined, 'the first snapshot goes whole');
      assert.ok(deltas.slice(1).some((d) => d !== undefined), 'the edits went as deltas');
      // Each edit changes the config from the one before it. Not from every earlier one: putting r6
      // back restores the config after the first edit (the same version) when the API server
      // stamps the same creation second, so distinct-across-all flaked with the clock.
      checked.forEach((version, i) => { if (i > 0) assert.notEqual(version, checked[i - 1], `edit ${i} changed the config`); });
    } finally {
      await feed.stop();
      await thread.close();
      await client.close();
      await server.close();
    }
  });
});
