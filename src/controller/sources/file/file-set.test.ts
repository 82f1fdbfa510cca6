import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join, resolve } from 'node:path';
import { after, describe, it } from 'node:test';
import { FileSet } from './file-set.ts';
import { DEFAULT_CONFIG_LIMITS } from './limits.ts';
import { readConfigFile } from './read.ts';

const route = (name: string, path: string): string => `---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: { name: ${name}, namespace: default }
spec:
  parentRefs: [{ name: gw }]
  rules: [{ matches: [{ path: { type: PathPrefix, value: ${path} } }] }]
`;

describe('FileSet: a re-read file keeps the objects that did not change', () => {
  const dir = mkdtempSync(join(tmpdir(), 'file-set-'));
  after(() => rmSync(dir, { recursive: true, force: true }));
  const file = join(dir, 'routes.yaml');
  const objectsOf = async (set: FileSet) => new Map((await set.scan()).snapshot.objects.map((s) => [s.object.metadata.name, s]));

  it('one edited route in a file is one new object; the others are the same objects (with their new origins)', async () => {
    const set = new FileSet([dir]);
    writeFileSync(file, route('a', '/a') + route('b', '/b') + route('c', '/c'));
    const first = await objectsOf(set);
    writeFileSync(file, `# a comment moves every line\n${route('a', '/a')}${route('b', '/changed')}${route('c', '/c')}`);
    const second = await objectsOf(set);
    assert.equal(second.get('a')?.object, first.get('a')?.object);
    assert.equal(second.get('c')?.object, first.get('c')?.object);
    assert.notEqual(second.get('b')?.object, first.get('b')?.object);
    assert.deepEqual(second.get('b')?.object.spec, { parentRefs: [{ name: 'gw' }], rules: [{ matches: [{ path: { type: 'PathPrefix', value: '/changed' } }] }] });
    assert.notEqual(second.get('a')?.origin?.line, first.get('a')?.origin?.line, 'the origin is the new version\'s');
  });

  it('objects that moved to other places in the file are still the same objects; one whose key order changed is new', async () => {
    const set = new FileSet([dir]);
    writeFileSync(file, route('a', '/a') + route('b', '/b') + route('c', '/c'));
    const first = await objectsOf(set);
    writeFileSync(file, route('c', '/c') + route('a', '/a') + route('b', '/b'));
    const second = await objectsOf(set);
    for (const name of ['a', 'b', 'c']) assert.equal(second.get(name)?.object, first.get(name)?.object, name);
    // b at its place again, its keys in another order.
    const reordered = route('b', '/b').replace('metadata: { name: b, namespace: default }', 'metadata: { namespace: default, name: b }');
    writeFileSync(file, route('c', '/c') + route('a', '/a') + reordered);
    const third = await objectsOf(set);
    assert.equal(third.get('a')?.object, first.get('a')?.object);
    assert.notEqual(third.get('b')?.object, first.get('b')?.object, 'the same data in another key order is another JSON: not the previous object');
    assert.deepEqual(third.get('b')?.object, first.get('b')?.object);
  });

  it('a broken version in between does not lose the kept objects', async () => {
    const set = new FileSet([dir]);
    writeFileSync(file, route('a', '/a') + route('b', '/b'));
    const first = await objectsOf(set);
    writeFileSync(file, 'kind: [unclosed');
    const broken = await objectsOf(set);
    assert.equal(broken.get('a')?.object, first.get('a')?.object, 'served from the last good version');
    writeFileSync(file, route('a', '/a') + route('b', '/b2'));
    const fixed = await objectsOf(set);
    assert.equal(fixed.get('a')?.object, first.get('a')?.object);
    assert.notEqual(fixed.get('b')?.object, first.get('b')?.object);
  });
});

describe('FileSet: a scan told which files were touched reads only those (and new ones)', () => {
  const dir = mkdtempSync(join(tmpdir(), 'file-set-touched-'));
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('reads the touched file and a new one, takes the others as they were, drops a gone one', async () => {
    const set = new FileSet([dir]);
    for (const name of ['a', 'b', 'c']) writeFileSync(join(dir, `${name}.yaml`), route(name, `/${name}`));
    const reads: string[] = [];
    const read = (file: string, previousHash: string | undefined) => { reads.push(file); return readConfigFile(file, previousHash, DEFAULT_CONFIG_LIMITS); };
    await set.scan(read);
    assert.equal(reads.length, 3);

    reads.length = 0;
    writeFileSync(join(dir, 'a.yaml'), route('a', '/a2'));
    writeFileSync(join(dir, 'b.yaml'), route('b', '/b2')); // changed, but no event named it
    writeFileSync(join(dir, 'd.yaml'), route('d', '/d'));
    rmSync(join(dir, 'c.yaml'));
    const result = await set.scan(read, new Set([resolve(dir, 'a.yaml')]));
    assert.deepEqual(reads.map((f) => basename(f)).sort(), ['a.yaml', 'd.yaml']);
    const paths = new Map(result.snapshot.objects.map((s) => [s.object.metadata.name, (s.object.spec as { rules: { matches: { path: { value: string } }[] }[] }).rules[0]?.matches[0]?.path.value]));
    assert.deepEqual([...paths].sort(), [['a', '/a2'], ['b', '/b'], ['d', '/d']]);

    reads.length = 0;
    const all = await set.scan(read, 'all');
    assert.deepEqual(reads.map((f) => basename(f)).sort(), ['a.yaml', 'b.yaml', 'd.yaml']);
    assert.ok(all.snapshot.objects.some((s) => JSON.stringify(s.object.spec).includes('/b2')), 'a full scan sees the change no event named');
  });
});
