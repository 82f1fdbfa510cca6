import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { parseAllDocuments } from 'yaml';
import type { KubeObject, ObjectStatus } from '../api/gateway/object.ts';
import { silentLogger } from '../common/logger.ts';
import { translate } from '../controller/translate/index.ts';
import { applyStatusUpdate, TranslationAbortedError, TranslatorThread, type TranslationUpdate } from './translator-thread.ts';
import { statusId } from '../controller/translate/object-delta.ts';

const GOLDEN = join(import.meta.dirname, '../../test/golden');

function goldenInputs(): { name: string; objects: KubeObject[] }[] {
  return readdirSync(GOLDEN, { recursive: true, encoding: 'utf8' }).filter((f) => f.endsWith('.yaml')).sort().map((name) => {
    const input = readFileSync(join(GOLDEN, name), 'utf8').split(/^---[ \t]*\r?\n# Output/m)[0];
    return { name, objects: parseAllDocuments(input).map((d) => d.toJS() as KubeObject).filter((o) => o !== null && o !== undefined) };
  });
}

/**
 * The path of the first value in `value` that structured clone would not carry unchanged: a
 * function, a Map or Set, a class instance (its prototype is lost), a Date, a symbol, a bigint.
 */
function firstNonPlain(value: unknown, path = ''): string | undefined {
  if (value === null || ['string', 'number', 'boolean', 'undefined'].includes(typeof value)) return undefined;
  if (typeof value !== 'object') return `${path} (${typeof value})`;
  const proto = Object.getPrototypeOf(value) as unknown;
  if (Array.isArray(value)) return value.map((v, i) => firstNonPlain(v, `${path}/${i}`)).find((p) => p !== undefined);
  if (proto !== Object.prototype && proto !== null) return `${path} (${(value as object).constructor?.name ?? 'unknown class'})`;
  return Object.entries(value).map(([k, v]) => firstNonPlain(v, `${path}/${k}`)).find((p) => p !== undefined);
}

const withSecret: KubeObject[] = parseAllDocuments(`
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
kind: Secret
metadata: { name: key, namespace: default }
stringData: { Authorization: "Bearer sk-thread-0123456789abcdef" }
---
apiVersion: switchboard.dev/v1alpha1
kind: ProxyBackend
metadata: { name: llm, namespace: default }
spec:
  ai: { provider: { providerA: { model: gpt-4o } } }
  policies: { auth: { secretRef: { name: key } } }
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: { name: llm, namespace: default }
spec:
  parentRefs: [{ name: gw }]
  rules: [{ backendRefs: [{ group: switchboard.dev, kind: ProxyBackend, name: llm }] }]
`).map((d) => d.toJS() as KubeObject);

describe('TranslatorThread', () => {
  const thread = new TranslatorThread({ logger: silentLogger });
  after(() => thread.close());

  it('gives the result translate() gives in-process, Secret locations and values included', async () => {
    const local = translate(withSecret);
    assert.ok(local.secretPaths.length > 0 && local.secretValues.includes('sk-thread-0123456789abcdef'), 'the case holds a Secret');
    assert.deepEqual(await thread.translate(withSecret), local);
    assert.deepEqual(await thread.translate(withSecret, { controllerName: 'example.com/other' }), translate(withSecret, { controllerName: 'example.com/other' }));
  });

  it('every golden case translates to plain data that crosses the thread boundary unchanged', async () => {
    const cases = goldenInputs();
    assert.ok(cases.length > 20);
    for (const { name, objects } of cases) {
      const local = translate(objects);
      assert.equal(firstNonPlain(local), undefined, `${name}: the result holds a value structured clone changes`);
      assert.deepEqual(await thread.translate(objects), local, name);
    }
  });

  it('after the first request sends only what changed, and unchanged Routes and Backends come back as the same objects', async () => {
    const route = (name: string, path: string): KubeObject => ({
      apiVersion: 'gateway.networking.k8s.io/v1', kind: 'HTTPRoute', metadata: { name, namespace: 'default' },
      spec: { parentRefs: [{ name: 'gw' }], rules: [{ matches: [{ path: { type: 'PathPrefix', value: path } }], backendRefs: [{ group: 'switchboard.dev', kind: 'ProxyBackend', name: 'llm' }] }] },
    });
    const first = [...withSecret, route('one', '/one'), route('two', '/two')];
    const before = await thread.translate(first);
    assert.deepEqual(before, translate(first));
    // The same objects (identity) except route two, edited, and a new route three.
    const edited = [...first.slice(0, withSecret.length + 1), route('two', '/changed'), route('three', '/three')];
    const after = await thread.translate(edited);
    assert.deepEqual(after, translate(edited));
    assert.equal(after.config.routes['default/one'], before.config.routes['default/one'], 'an unchanged route keeps its identity');
    assert.notEqual(after.config.routes['default/two'], before.config.routes['default/two']);
    assert.deepEqual(Object.keys(after.config.routes), Object.keys(translate(edited).config.routes), 'routes stay in key order');
    for (const key of Object.keys(after.config.backends)) assert.equal(after.config.backends[key], before.config.backends[key], `backend ${key} keeps its identity`);
    // An edit that names the same routes keeps every bind (they cross as null and are the previous objects).
    const pathOnly = [...edited.slice(0, -2), route('two', '/changed again'), edited.at(-1) as KubeObject];
    const again = await thread.translate(pathOnly);
    assert.deepEqual(again, translate(pathOnly));
    assert.ok(again.config.binds.length > 0);
    again.config.binds.forEach((bind, i) => assert.equal(bind, after.config.binds[i], `bind ${bind.key} keeps its identity`));
    // Deleting brings the same result as a fresh translation too.
    assert.deepEqual(await thread.translate(withSecret), translate(withSecret));
  });
});

describe('TranslatorThread idle GC', () => {
  it('gives back the memory a translation grew once quiet (SWITCHBOARD_IDLE_GC=1, src/common/idle-gc.ts)', async () => {
    const routes = Array.from({ length: 1500 }, (_, i): KubeObject => ({
      apiVersion: 'gateway.networking.k8s.io/v1', kind: 'HTTPRoute', metadata: { name: `r${i}`, namespace: 'default' },
      spec: { parentRefs: [{ name: 'gw' }], rules: [{ matches: [{ path: { type: 'PathPrefix', value: `/r${i}` } }], backendRefs: [{ group: 'switchboard.dev', kind: 'ProxyBackend', name: 'llm' }] }] },
    }));
    // Opt-in (it costs edit latency): a worker copies the environment when it is created.
    process.env.SWITCHBOARD_IDLE_GC = '1';
    const thread = new TranslatorThread({ logger: silentLogger });
    try {
      thread.prepare();
      delete process.env.SWITCHBOARD_IDLE_GC;
      await thread.translate([...withSecret, ...routes]);
      const afterTranslation = (await thread.heap(false))?.statistics.total_physical_size ?? 0;
      // The GC comes 2 s after the thread's last work; a regular GC in between gives back little.
      let now = afterTranslation;
      for (const deadline = Date.now() + 6000; Date.now() < deadline && now > afterTranslation * 0.8;) {
        await new Promise((resolve) => setTimeout(resolve, 250));
        now = (await thread.heap(false))?.statistics.total_physical_size ?? 0;
      }
      assert.ok(now < afterTranslation * 0.8, `the thread's heap shrank by a fifth: ${afterTranslation} → ${now} bytes`);
    } finally {
      delete process.env.SWITCHBOARD_IDLE_GC;
      await thread.close();
    }
  });
});

describe('TranslatorThread limits', () => {
  const misbehaving = new URL('./testdata/misbehaving-translator.ts', import.meta.url);
  const objects: KubeObject[] = [{ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'a' } }];

  it('gives up on a translation past the time limit, then translates again on a new thread', async () => {
    const thread = new TranslatorThread({ logger: silentLogger, workerModule: misbehaving, timeoutMs: 300 });
    try {
      const started = performance.now();
      await assert.rejects(thread.translate(objects, { controllerName: 'hang' }), (err: Error) => err instanceof TranslationAbortedError && /translation took longer than 0.3 s/.test(err.message));
      assert.ok(performance.now() - started < 5_000, 'the limit, not the thread, ended the wait');
      assert.equal((await thread.translate(objects)).config.version, 'n1');
    } finally {
      await thread.close();
    }
  });

  it('gives up on a translation past the memory cap, then translates again on a new thread', async () => {
    const thread = new TranslatorThread({ logger: silentLogger, workerModule: misbehaving, maxHeapMiB: 64, timeoutMs: 60_000 });
    try {
      await assert.rejects(thread.translate(objects, { controllerName: 'grow' }), (err: Error) => err instanceof TranslationAbortedError && /needed more than the translator thread's 64 MiB/.test(err.message));
      assert.equal((await thread.translate(objects)).config.version, 'n1');
    } finally {
      await thread.close();
    }
  });

  it('reports a translator that threw as an error, and keeps the thread', async () => {
    const thread = new TranslatorThread({ logger: silentLogger, workerModule: misbehaving });
    try {
      await assert.rejects(thread.translate(objects, { controllerName: 'throw' }), /translation failed: boom/);
      assert.equal((await thread.translate(objects)).config.version, 'n1');
    } finally {
      await thread.close();
    }
  });

  it('after close, translations are refused instead of hanging', async () => {
    const thread = new TranslatorThread({ logger: silentLogger, workerModule: misbehaving });
    await thread.close();
    await assert.rejects(thread.translate(objects), TranslationAbortedError);
  });
});

describe('applyStatusUpdate', () => {
  const status = (name: string, reason = 'Accepted'): ObjectStatus => ({ apiVersion: 'gateway.networking.k8s.io/v1', kind: 'HTTPRoute', metadata: { name, namespace: 'apps' }, status: { reason } });
  const update = (set: ObjectStatus[], removed: ObjectStatus[]): TranslationUpdate => ({
    version: 'v2', binds: [], secretPaths: [], secretValues: [],
    changes: { full: false, routes: { set: {}, removed: [] }, backends: { set: {}, removed: [] }, statuses: { set: Object.fromEntries(set.map((s) => [statusId(s), s])), removed: removed.map(statusId) } },
  });
  const [a, b, c] = [status('a'), status('b'), status('c')];
  const rows: { name: string; set: ObjectStatus[]; removed: ObjectStatus[]; expect: (string | ObjectStatus)[] }[] = [
    { name: 'unchanged statuses stay the same objects, a changed one is replaced in place', set: [status('b', 'Changed')], removed: [], expect: [a, 'b:Changed', c] },
    { name: 'a removed status goes, a new one is added in object order', set: [status('ab')], removed: [c], expect: [a, 'ab:Accepted', b] },
    { name: 'an id both removed and set among the previous ones goes (as before)', set: [status('c', 'Changed')], removed: [c], expect: [a, b] },
  ];
  it('statuses that arrive keyed by their id keep that id: the next edit builds no ids for them (first result and later changes)', () => {
    // Keys no id function would build, so the test sees which id statusId() answers with.
    const [x, y, z] = structuredClone([status('x'), status('y'), status('z')]) as ObjectStatus[];
    const first: TranslationUpdate = { ...update([], []), changes: { ...update([], []).changes, full: true, statuses: { set: { 'key-of-x': x!, 'key-of-y': y! }, removed: [] } } };
    const out = applyStatusUpdate(undefined, first);
    assert.deepEqual(out, [x, y]);
    assert.deepEqual([statusId(x!), statusId(y!)], ['key-of-x', 'key-of-y']);
    const later: TranslationUpdate = { ...update([], []), changes: { ...update([], []).changes, statuses: { set: { 'key-of-z': z! }, removed: [] } } };
    applyStatusUpdate(out, later);
    assert.equal(statusId(z!), 'key-of-z');
  });

  it('a random sequence of edits gives, at every step, what the merge of a fresh copy gives (statuses replaced in place by position, or merged when added or removed)', () => {
    // mulberry32: a seeded sequence whose low bits vary too.
    let seed = 7;
    const random = (n: number): number => {
      seed = (seed + 0x6d2b79f5) | 0;
      let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
      t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
      return ((t ^ (t >>> 14)) >>> 0) % n;
    };
    const names = Array.from({ length: 40 }, (_, i) => `s${String(i).padStart(2, '0')}`);
    const initial = names.slice(0, 30).map((name) => status(name));
    let held = applyStatusUpdate(undefined, { ...update([], []), changes: { ...update([], []).changes, full: true, statuses: { set: Object.fromEntries(initial.map((s) => [statusId(s), s])), removed: [] } } });
    let inPlace = 0;
    for (let step = 0; step < 300; step++) {
      const present = new Set(held.map((s) => s.metadata.name));
      const set: ObjectStatus[] = [];
      const removed: ObjectStatus[] = [];
      const kind = random(4);
      // Mostly in-place changes (what a route edit sends), sometimes a new status or a removal.
      for (let k = 0; k < 1 + random(3); k++) {
        const name = names[random(names.length)] as string;
        if (kind === 0 && present.has(name)) removed.push(status(name));
        else if (kind === 1 || present.has(name)) set.push(status(name, `step ${step}`));
      }
      const u = update(set, removed.filter((r) => !set.some((s) => statusId(s) === statusId(r))));
      const expected = applyStatusUpdate([...held], u); // a copy: no positions, always the merge
      const before = held;
      held = applyStatusUpdate(held, u);
      assert.deepEqual(held, expected, `step ${step}`);
      assert.ok(held !== before, 'a new list each time');
      if (set.length > 0 && u.changes.statuses!.removed.length === 0 && set.every((s) => present.has(s.metadata.name))) inPlace++;
    }
    assert.ok(inPlace > 100, `the sequence exercised in-place edits (${inPlace})`);
  });

  it('a list reordered after it was handed out is merged, not patched by stale positions', () => {
    const [x, y] = [status('x'), status('y')];
    const list = applyStatusUpdate(undefined, { ...update([], []), changes: { ...update([], []).changes, full: true, statuses: { set: { [statusId(x)]: x, [statusId(y)]: y }, removed: [] } } });
    list.reverse();
    const out = applyStatusUpdate(list, update([status('x', 'Changed')], []));
    assert.deepEqual(out.map((s) => `${s.metadata.name}:${(s.status as { reason: string }).reason}`), ['y:Accepted', 'x:Changed']);
  });

  for (const row of rows) {
    it(row.name, () => {
      const out = applyStatusUpdate([a, b, c], update(row.set, row.removed));
      assert.equal(out.length, row.expect.length);
      row.expect.forEach((want, i) => {
        if (typeof want === 'string') assert.equal(`${out[i]!.metadata.name}:${(out[i]!.status as { reason: string }).reason}`, want);
        else assert.equal(out[i], want);
      });
    });
  }
});
