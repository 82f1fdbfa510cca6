import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, it } from 'node:test';
import { pino } from 'pino';
import { parseAllDocuments } from 'yaml';
import type { KubeObject } from '../api/gateway/object.ts';
import { translate } from '../controller/translate/index.ts';
import { ConfigThread } from './config-thread.ts';
import type { FedTranslation } from './gateway.ts';
import { TranslationAbortedError } from './translator-thread.ts';

const infrastructure = `
apiVersion: gateway.networking.k8s.io/v1
kind: GatewayClass
metadata: { name: switchboard }
spec: { controllerName: switchboard.dev/gateway-controller }
---
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: { name: gw, namespace: default }
spec: { gatewayClassName: switchboard, listeners: [{ name: http, port: 8080, protocol: HTTP }] }
---
apiVersion: v1
kind: Service
metadata: { name: echo, namespace: default }
spec: { ports: [{ port: 80 }] }
`;

const route = (name: string, path: string): string => `---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: { name: ${name}, namespace: default }
spec:
  parentRefs: [{ name: gw }]
  rules: [{ matches: [{ path: { type: PathPrefix, value: ${path} } }], backendRefs: [{ name: echo, port: 80 }] }]
`;

/** A logger whose lines (as JSON records) the test reads. */
function recordingLogger(): { logger: pino.Logger; lines: Record<string, unknown>[] } {
  const lines: Record<string, unknown>[] = [];
  return { logger: pino({ level: 'info' }, { write: (line: string) => lines.push(JSON.parse(line) as Record<string, unknown>) }), lines };
}

/** Collects what a thread delivers; `next()` waits for the next one. */
class Deliveries {
  readonly all: (FedTranslation | Error)[] = [];
  #waiters: (() => void)[] = [];
  readonly deliver = (result: FedTranslation | Error): void => {
    this.all.push(result);
    for (const wake of this.#waiters.splice(0)) wake();
  };
  async next(count: number, timeoutMs = 20_000): Promise<FedTranslation | Error> {
    const deadline = Date.now() + timeoutMs;
    while (this.all.length < count) {
      if (Date.now() > deadline) throw new Error(`no delivery ${count} within ${timeoutMs} ms`);
      await new Promise<void>((resolve) => { this.#waiters.push(resolve); setTimeout(resolve, 50); });
    }
    return this.all[count - 1] as FedTranslation | Error;
  }
  /** The first translation delivered that `accept`s (a write is seen half-done now and then: truncated, then written). */
  async until(accept: (t: FedTranslation) => boolean, timeoutMs = 20_000): Promise<FedTranslation> {
    const deadline = Date.now() + timeoutMs;
    for (let n = 1; ; n++) {
      const next = await this.next(n, Math.max(1, deadline - Date.now()));
      if (!(next instanceof Error) && accept(next)) return next;
    }
  }
}

/** Statuses as translate() makes them: the status writer adds each condition's lastTransitionTime. */
function withoutTimes(statuses: readonly unknown[]): unknown {
  return JSON.parse(JSON.stringify(statuses, (key, value: unknown) => (key === 'lastTransitionTime' ? undefined : value)));
}

const translation = (result: FedTranslation | Error): FedTranslation => {
  if (result instanceof Error) throw result;
  return result;
};

describe('ConfigThread', () => {
  let dir: string;
  let thread: ConfigThread | undefined;
  afterEach(async () => {
    await thread?.stop();
    thread = undefined;
    rmSync(dir, { recursive: true, force: true });
  });
  const folder = (): string => (dir = mkdtempSync(join(tmpdir(), 'switchboard-config-thread-')));

  it('delivers what translate() gives for the files; an edit keeps unchanged Routes as the same objects', async () => {
    const root = folder();
    writeFileSync(join(root, 'infra.yaml'), infrastructure);
    writeFileSync(join(root, 'routes.yaml'), route('a', '/a') + route('b', '/b'));
    const { logger } = recordingLogger();
    const deliveries = new Deliveries();
    thread = new ConfigThread({ paths: [root], logger, debounceMs: 5 });
    await thread.start(deliveries.deliver);
    const first = translation(await deliveries.next(1));
    const objects = parseAllDocuments(infrastructure + route('a', '/a') + route('b', '/b')).map((d) => d.toJS() as KubeObject);
    const expected = translate(objects);
    assert.deepEqual(first.config, expected.config);
    assert.equal(first.statuses, undefined, 'statuses stay in the thread');
    const firstStatuses = await thread.statuses();
    assert.deepEqual(withoutTimes(firstStatuses), expected.statuses);
    assert.equal(first.sourceErrors, 0);

    writeFileSync(join(root, 'routes.yaml'), route('a', '/a') + route('b', '/b2'));
    const second = await deliveries.until((t) => JSON.stringify(t.config.routes['default/b'] ?? null).includes('/b2'));
    assert.notEqual(second.config.version, first.config.version);
    assert.equal(second.config.routes['default/a'], first.config.routes['default/a'], 'the unchanged route is the same object');
    assert.notDeepEqual(second.config.routes['default/b'], first.config.routes['default/b']);
    const edited = translate(parseAllDocuments(infrastructure + route('a', '/a') + route('b', '/b2')).map((d) => d.toJS() as KubeObject));
    assert.deepEqual(second.config, edited.config);
    const secondStatuses = await thread.statuses();
    assert.deepEqual(withoutTimes(secondStatuses), edited.statuses);
    // The thread's status writer stamps the translator's statuses in place: a condition the edit
    // left as it was (the edited route's too, a new status object) keeps its lastTransitionTime.
    const times = (statuses: readonly unknown[]): string[] => JSON.stringify(statuses).match(/"lastTransitionTime":"[^"]+"/g) ?? [];
    assert.ok(times(firstStatuses).length > 0);
    assert.deepEqual(times(secondStatuses), times(firstStatuses));
    assert.equal(second.config.binds[0], first.config.binds[0], 'a bind the edit left equal is the same object (the proxy keeps its route tables)');

    writeFileSync(join(root, 'routes.yaml'), route('a', '/a') + route('b', '/b2') + route('c', '/c'));
    const third = await deliveries.until((t) => t.config.routes['default/c'] !== undefined);
    assert.notEqual(third.config.binds[0], second.config.binds[0], 'a new attachment: a new bind');
    assert.deepEqual(third.config, translate(parseAllDocuments(infrastructure + route('a', '/a') + route('b', '/b2') + route('c', '/c')).map((d) => d.toJS() as KubeObject)).config);
  });

  it('gives back the memory a translation grew once quiet (the idle GC, src/common/idle-gc.ts)', async () => {
    const root = folder();
    writeFileSync(join(root, 'infra.yaml'), infrastructure);
    writeFileSync(join(root, 'routes.yaml'), Array.from({ length: 1500 }, (_, i) => route(`r${i}`, `/r${i}`)).join(''));
    const deliveries = new Deliveries();
    // Opt-in (it costs edit latency): a worker copies the environment when it is created.
    process.env.SWITCHBOARD_IDLE_GC = '1';
    try {
      thread = new ConfigThread({ paths: [root], logger: recordingLogger().logger, debounceMs: 5 });
      await thread.start(deliveries.deliver);
    } finally {
      delete process.env.SWITCHBOARD_IDLE_GC;
    }
    translation(await deliveries.next(1));
    const afterTranslation = (await thread.heapStatistics())?.total_physical_size ?? 0;
    // The GC comes 2 s after the thread's last work; a regular GC in between gives back little.
    let now = afterTranslation;
    for (const deadline = Date.now() + 6000; Date.now() < deadline && now > afterTranslation * 0.8;) {
      await new Promise((resolve) => setTimeout(resolve, 250));
      now = (await thread.heapStatistics())?.total_physical_size ?? 0;
    }
    assert.ok(now < afterTranslation * 0.8, `the thread's heap shrank by a fifth: ${afterTranslation} → ${now} bytes`);
  });

  it('a broken file is logged with its path through the given logger, and its last good objects keep serving', async () => {
    const root = folder();
    writeFileSync(join(root, 'infra.yaml'), infrastructure);
    writeFileSync(join(root, 'routes.yaml'), route('a', '/a'));
    const { logger, lines } = recordingLogger();
    const deliveries = new Deliveries();
    thread = new ConfigThread({ paths: [root], logger, debounceMs: 5 });
    await thread.start(deliveries.deliver);
    const first = translation(await deliveries.next(1));

    writeFileSync(join(root, 'routes.yaml'), 'kind: [unclosed');
    writeFileSync(join(root, 'more.yaml'), route('c', '/c'));
    const second = await deliveries.until((t) => t.config.routes['default/c'] !== undefined && t.sourceErrors > 0);
    assert.ok(second.config.routes['default/a'], 'the broken file still contributes its last good route');
    assert.ok(second.config.routes['default/c']);
    assert.equal(second.config.routes['default/a'], first.config.routes['default/a']);
    assert.ok(second.sourceErrors > 0);
    assert.ok(second.problems.some((p) => p.file?.endsWith('routes.yaml')));
    assert.ok(lines.some((l) => l.level === 50 && String(l.file).endsWith('routes.yaml')), JSON.stringify(lines));
    assert.ok(lines.some((l) => l.level === 40 && /last good version/.test(String(l.msg))));
  });

  it('fails start when a path is missing', async () => {
    const root = folder();
    thread = new ConfigThread({ paths: [join(root, 'nope')], logger: recordingLogger().logger });
    await assert.rejects(thread.start(() => {}), /configuration path not found/);
  });

  it('begun before start(): what the thread delivered meanwhile is handed to the taker start() is given', async () => {
    const root = folder();
    writeFileSync(join(root, 'infra.yaml'), infrastructure);
    writeFileSync(join(root, 'routes.yaml'), route('a', '/a'));
    thread = new ConfigThread({ paths: [root], logger: recordingLogger().logger, debounceMs: 5 });
    thread.begin();
    // The first translation is done before anyone takes it (the CLI is still loading the proxy).
    await new Promise((resolve) => setTimeout(resolve, 3000));
    const deliveries = new Deliveries();
    await thread.start(deliveries.deliver);
    assert.equal(deliveries.all.length, 1, 'the early result, handed over by start()');
    const first = translation(deliveries.all[0] as FedTranslation | Error);
    assert.ok(first.config.routes['default/a']);
    writeFileSync(join(root, 'routes.yaml'), route('a', '/a2'));
    await deliveries.until((t) => JSON.stringify(t.config.routes['default/a'] ?? null).includes('/a2'));
  });

  it('begun with a missing path: start() fails, not begin()', async () => {
    const root = folder();
    thread = new ConfigThread({ paths: [join(root, 'nope')], logger: recordingLogger().logger });
    thread.begin();
    await assert.rejects(thread.start(() => {}), /configuration path not found/);
  });

  const misbehaving = new URL('./testdata/misbehaving-config-thread.ts', import.meta.url);

  it('gives up on a translation past the time limit, and starts a new thread on the next change', async () => {
    const root = folder();
    writeFileSync(join(root, 'infra.yaml'), infrastructure);
    const deliveries = new Deliveries();
    thread = new ConfigThread({ paths: [root], logger: recordingLogger().logger, workerModule: misbehaving, translateOptions: { controllerName: 'hang' }, timeoutMs: 300, debounceMs: 5 });
    const started = Date.now();
    await thread.start(deliveries.deliver);
    const first = await deliveries.next(1);
    assert.ok(first instanceof TranslationAbortedError);
    assert.match(first.message, /took longer than 0.3 s/);
    assert.ok(Date.now() - started < 10_000);
    writeFileSync(join(root, 'infra.yaml'), infrastructure + '\n');
    const second = await deliveries.next(2);
    assert.ok(second instanceof TranslationAbortedError, 'a new thread took the change');
  });

  it('gives up on a translation past the memory cap', async () => {
    const root = folder();
    writeFileSync(join(root, 'infra.yaml'), infrastructure);
    const deliveries = new Deliveries();
    thread = new ConfigThread({ paths: [root], logger: recordingLogger().logger, workerModule: misbehaving, translateOptions: { controllerName: 'grow' }, maxHeapMiB: 64, timeoutMs: 60_000 });
    await thread.start(deliveries.deliver);
    const first = await deliveries.next(1);
    assert.ok(first instanceof TranslationAbortedError);
    assert.match(first.message, /more than the translator thread's 64 MiB/);
  });

  it('reports a translation that failed as an Error', async () => {
    const root = folder();
    writeFileSync(join(root, 'infra.yaml'), infrastructure);
    const deliveries = new Deliveries();
    thread = new ConfigThread({ paths: [root], logger: recordingLogger().logger, workerModule: misbehaving });
    await thread.start(deliveries.deliver);
    const first = await deliveries.next(1);
    assert.ok(first instanceof Error && !(first instanceof TranslationAbortedError));
    assert.match(first.message, /boom/);
  });
});
