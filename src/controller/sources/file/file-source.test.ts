import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it, mock } from 'node:test';
import { pino } from 'pino';
import type { SourceSnapshot } from '../types.ts';
import { FileSource } from './file-source.ts';

const service = (name: string, port = 80): string => `apiVersion: v1\nkind: Service\nmetadata:\n  name: ${name}\nspec:\n  ports: [{port: ${port}}]\n`;

/** Collects snapshots and lets a test wait (bounded) for one that satisfies a predicate. */
class Subscriber {
  readonly snapshots: SourceSnapshot[] = [];
  #waiters: (() => void)[] = [];
  readonly onSnapshot = (s: SourceSnapshot): void => {
    this.snapshots.push(s);
    for (const wake of this.#waiters.splice(0)) wake();
  };

  async waitFor(predicate: (s: SourceSnapshot) => boolean, timeoutMs = 5000): Promise<SourceSnapshot> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const match = this.snapshots.findLast(predicate);
      if (match) return match;
      const remaining = deadline - Date.now();
      if (remaining <= 0) throw new Error(`no matching snapshot within ${timeoutMs} ms; last: ${JSON.stringify(this.snapshots.at(-1))}`);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, remaining);
        this.#waiters.push(() => { clearTimeout(timer); resolve(); });
      });
    }
  }
}

const names = (s: SourceSnapshot): string[] => s.objects.map((o) => o.object.metadata.name).sort();

describe('FileSource', () => {
  let dir: string;
  const logLines: Record<string, unknown>[] = [];
  const logger = pino({ level: 'info' }, { write: (line: string) => logLines.push(JSON.parse(line) as Record<string, unknown>) });
  before(() => { dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sb-file-source-')); });
  after(() => fs.rmSync(dir, { recursive: true, force: true }));

  it('refuses to start on a path that does not exist', async () => {
    const source = new FileSource({ paths: [path.join(dir, 'missing')], logger });
    await assert.rejects(source.start(() => {}), /configuration path not found/);
  });

  it('reads folders recursively, reloads on change, keeps a broken file\'s objects and drops a deleted file\'s', async (t) => {
    const root = fs.mkdtempSync(path.join(dir, 'tree-'));
    fs.mkdirSync(path.join(root, 'nested', 'deeper'), { recursive: true });
    fs.writeFileSync(path.join(root, 'a.yaml'), service('a'));
    fs.writeFileSync(path.join(root, 'nested', 'deeper', 'b.yml'), service('b'));
    fs.writeFileSync(path.join(root, 'notes.txt'), 'not yaml: [');
    fs.writeFileSync(path.join(root, '.hidden.yaml'), service('hidden'));
    const source = new FileSource({ paths: [root], logger, debounceMs: 20 });
    t.after(() => source.stop());
    const sub = new Subscriber();
    await source.start(sub.onSnapshot);
    assert.deepEqual(names(sub.snapshots[0]), ['a', 'b']);
    assert.deepEqual(sub.snapshots[0].objects.find((o) => o.object.metadata.name === 'b')?.origin, { file: path.join(root, 'nested', 'deeper', 'b.yml'), document: 0, line: 1 });

    fs.writeFileSync(path.join(root, 'a.yaml'), `${service('a')}---\n${service('a2')}`);
    await sub.waitFor((s) => names(s).includes('a2'));

    fs.writeFileSync(path.join(root, 'a.yaml'), 'apiVersion: v1\nkind: Service\nmetadata: {name: [oops\n');
    const broken = await sub.waitFor((s) => s.problems.length > 0);
    assert.deepEqual(names(broken), ['a', 'a2', 'b'], 'a typo keeps the file\'s last good objects');
    assert.equal(broken.problems[0].file, path.join(root, 'a.yaml'));
    assert.ok(broken.problems[0].line !== undefined);
    assert.ok(logLines.some((l) => l.level === 50 && l.file === path.join(root, 'a.yaml')), 'the syntax error is logged with its file');
    assert.ok(logLines.some((l) => l.keptObjects === 2));

    fs.writeFileSync(path.join(root, 'a.yaml'), service('a3'));
    await sub.waitFor((s) => s.problems.length === 0 && names(s).includes('a3'));

    fs.rmSync(path.join(root, 'nested'), { recursive: true });
    const removed = await sub.waitFor((s) => !names(s).includes('b'));
    assert.deepEqual(names(removed), ['a3']);

    // A folder created later is watched too, and a file replaced by rename keeps being seen.
    fs.mkdirSync(path.join(root, 'later'));
    const later = path.join(root, 'later', 'c.yaml');
    fs.writeFileSync(later, service('c1'));
    await sub.waitFor((s) => names(s).includes('c1'));
    for (const name of ['c2', 'c3', 'c4']) {
      fs.writeFileSync(`${later}.tmp`, service(name));
      fs.renameSync(`${later}.tmp`, later);
      await sub.waitFor((s) => names(s).includes(name));
    }
  });

  it('watches a single file through its folder and sees it replaced by rename', async (t) => {
    const root = fs.mkdtempSync(path.join(dir, 'single-'));
    const file = path.join(root, 'only.yaml');
    fs.writeFileSync(file, service('one'));
    fs.writeFileSync(path.join(root, 'sibling.yaml'), service('sibling'));
    const source = new FileSource({ paths: [file], logger, debounceMs: 20 });
    t.after(() => source.stop());
    const sub = new Subscriber();
    await source.start(sub.onSnapshot);
    assert.deepEqual(names(sub.snapshots[0]), ['one']);
    for (const name of ['two', 'three']) {
      fs.writeFileSync(`${file}.tmp`, service(name));
      fs.renameSync(`${file}.tmp`, file);
      await sub.waitFor((s) => names(s).includes(name));
    }
    assert.ok(sub.snapshots.every((s) => !names(s).includes('sibling')));
  });

  it('follows a ConfigMap volume update (the ..data link swapped; no event names the YAML file)', async (t) => {
    const root = fs.mkdtempSync(path.join(dir, 'configmap-'));
    const version = (n: number, name: string): void => {
      fs.mkdirSync(path.join(root, `..v${n}`));
      fs.writeFileSync(path.join(root, `..v${n}`, 'config.yaml'), service(name));
      fs.symlinkSync(`..v${n}`, path.join(root, '..data_tmp'));
      fs.renameSync(path.join(root, '..data_tmp'), path.join(root, '..data'));
    };
    version(1, 'first');
    fs.symlinkSync(path.join('..data', 'config.yaml'), path.join(root, 'config.yaml'));
    const source = new FileSource({ paths: [root], logger, debounceMs: 20 });
    t.after(() => source.stop());
    const sub = new Subscriber();
    await source.start(sub.onSnapshot);
    assert.deepEqual(names(sub.snapshots[0]), ['first']);
    version(2, 'second');
    await sub.waitFor((s) => names(s).includes('second'));
  });

  it('coalesces a burst of writes into one reload', async (t) => {
    const root = fs.mkdtempSync(path.join(dir, 'burst-'));
    const file = path.join(root, 'burst.yaml');
    fs.writeFileSync(file, service('s', 1));
    // A debounce longer than the synchronous burst below: every write lands before the timer fires.
    const source = new FileSource({ paths: [root], logger, debounceMs: 200, maxWaitMs: 5000 });
    t.after(() => source.stop());
    const sub = new Subscriber();
    await source.start(sub.onSnapshot);
    for (let port = 2; port <= 20; port++) fs.writeFileSync(file, service('s', port));
    const last = await sub.waitFor((s) => JSON.stringify(s.objects[0]?.object.spec).includes('20'));
    assert.equal(sub.snapshots.length, 2, 'the initial snapshot and one reload');
    assert.equal(sub.snapshots[1], last);
  });

  it('logs an ignored kind once, not on every reload', async (t) => {
    const root = fs.mkdtempSync(path.join(dir, 'kinds-'));
    const file = path.join(root, 'k.yaml');
    const deployment = 'apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: d}\n---\n';
    fs.writeFileSync(file, deployment + service('s', 1));
    const source = new FileSource({ paths: [root], logger, debounceMs: 20 });
    t.after(() => source.stop());
    const sub = new Subscriber();
    await source.start(sub.onSnapshot);
    fs.writeFileSync(file, deployment + service('s', 2));
    await sub.waitFor((s) => JSON.stringify(s.objects[0]?.object.spec).includes('2'));
    assert.deepEqual(names(sub.snapshots.at(-1) as SourceSnapshot), ['s']);
    assert.equal(logLines.filter((l) => l.kind === 'apps/Deployment').length, 1);
  });

  it('a failed folder listing after a scan is logged and looked at again, not a crash', async (t) => {
    const root = fs.mkdtempSync(path.join(dir, 'unlistable-'));
    fs.writeFileSync(path.join(root, 'a.yaml'), service('a'));
    const source = new FileSource({ paths: [root], logger, debounceMs: 20, maxWaitMs: 200 });
    t.after(() => source.stop());
    const sub = new Subscriber();
    await source.start(sub.onSnapshot);
    // Every listing fails while the mock stands: the scan's (reported, config kept) and then the
    // watch's, which ran in a promise's finally and, thrown, ended the process (unhandled rejection).
    const denied = mock.method(fs, 'readdirSync', () => { throw Object.assign(new Error('EACCES: permission denied'), { code: 'EACCES' }); });
    t.after(() => denied.mock.restore());
    const warned = logLines.length;
    fs.writeFileSync(path.join(root, 'b.yaml'), service('b'));
    const deadline = Date.now() + 5000;
    while (!logLines.slice(warned).some((l) => l.msg === 'listing the configuration folders failed; looking again')) {
      assert.ok(Date.now() < deadline, 'the failed listing is logged');
      await new Promise((ok) => setTimeout(ok, 10));
    }
    denied.mock.restore();
    // Looked at again without another event.
    await sub.waitFor((s) => names(s).includes('b'));
  });
});
