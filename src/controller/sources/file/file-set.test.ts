import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { FileSet } from './file-set.ts';

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
