/** Strategic merge against the cases the Kubernetes patch documentation shows (update-api-object-kubectl-patch). */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { strategicMerge, StrategicMergeError, type JsonMap } from './strategic-merge.ts';

const podSpec = (containers: JsonMap[], extra: JsonMap = {}): JsonMap => ({ template: { spec: { containers, ...extra } } });

const CASES: ReadonlyArray<{ name: string; base: JsonMap; patch: JsonMap; want: JsonMap }> = [
  { name: 'scalars overwrite', base: { replicas: 2, paused: false }, patch: { replicas: 3 }, want: { replicas: 3, paused: false } },
  { name: 'maps merge key by key', base: { labels: { a: '1', b: '2' } }, patch: { labels: { b: '3', c: '4' } }, want: { labels: { a: '1', b: '3', c: '4' } } },
  {
    // The docs' first example: patching a container list adds the patch-demo-ctr-2 container, keeps the first.
    name: 'containers merge by name (a new name is added)',
    base: podSpec([{ name: 'patch-demo-ctr', image: 'nginx' }]),
    patch: podSpec([{ name: 'patch-demo-ctr-2', image: 'redis' }]),
    want: podSpec([{ name: 'patch-demo-ctr', image: 'nginx' }, { name: 'patch-demo-ctr-2', image: 'redis' }]),
  },
  {
    name: 'containers merge by name (the same name merges fields)',
    base: podSpec([{ name: 'proxy', image: 'a', args: ['proxy'] }]),
    patch: podSpec([{ name: 'proxy', image: 'b' }]),
    want: podSpec([{ name: 'proxy', image: 'b', args: ['proxy'] }]),
  },
  {
    // The docs' tolerations example; SPEC.md merges tolerations by key.
    name: 'tolerations merge by key',
    base: { tolerations: [{ key: 'a', effect: 'NoSchedule' }] },
    patch: { tolerations: [{ key: 'dedicated', value: 'test-team', effect: 'NoSchedule' }, { key: 'a', effect: 'NoExecute' }] },
    want: { tolerations: [{ key: 'a', effect: 'NoExecute' }, { key: 'dedicated', value: 'test-team', effect: 'NoSchedule' }] },
  },
  { name: 'a list without a merge key is replaced', base: { args: ['a', 'b'] }, patch: { args: ['c'] }, want: { args: ['c'] } },
  {
    name: '$patch: delete removes a keyed list item',
    base: podSpec([{ name: 'proxy', image: 'a' }, { name: 'sidecar', image: 's' }]),
    patch: podSpec([{ name: 'sidecar', $patch: 'delete' }]),
    want: podSpec([{ name: 'proxy', image: 'a' }]),
  },
  { name: '$patch: delete removes a map', base: { affinity: { nodeAffinity: { x: 1 } }, replicas: 1 }, patch: { affinity: { $patch: 'delete' } }, want: { replicas: 1 } },
  { name: '$patch: replace replaces a map', base: { labels: { a: '1', b: '2' } }, patch: { labels: { $patch: 'replace', c: '3' } }, want: { labels: { c: '3' } } },
  {
    // The docs' "$patch: replace" list form: the item {$patch: replace} makes the list the patch's items only.
    name: '$patch: replace replaces a keyed list',
    base: podSpec([{ name: 'proxy', image: 'a' }, { name: 'sidecar', image: 's' }]),
    patch: podSpec([{ $patch: 'replace' }, { name: 'only', image: 'o' }]),
    want: podSpec([{ name: 'only', image: 'o' }]),
  },
  { name: 'null deletes the field', base: { replicas: 1, strategy: { type: 'Recreate' } }, patch: { strategy: null }, want: { replicas: 1 } },
  {
    name: 'null deletes inside a keyed list item',
    base: podSpec([{ name: 'proxy', image: 'a', resources: { limits: { cpu: '1' } } }]),
    patch: podSpec([{ name: 'proxy', resources: null }]),
    want: podSpec([{ name: 'proxy', image: 'a' }]),
  },
  {
    name: 'env merges by name inside a container',
    base: podSpec([{ name: 'proxy', env: [{ name: 'A', value: '1' }, { name: 'B', value: '2' }] }]),
    patch: podSpec([{ name: 'proxy', env: [{ name: 'B', value: 'x' }, { name: 'C', value: '3' }] }]),
    want: podSpec([{ name: 'proxy', env: [{ name: 'A', value: '1' }, { name: 'B', value: 'x' }, { name: 'C', value: '3' }] }]),
  },
  { name: 'Service ports merge by port', base: { ports: [{ port: 80, name: 'http' }] }, patch: { ports: [{ port: 80, nodePort: 30080 }, { port: 443, name: 'https' }] }, want: { ports: [{ port: 80, name: 'http', nodePort: 30080 }, { port: 443, name: 'https' }] } },
];

describe('strategicMerge', () => {
  for (const c of CASES) {
    it(c.name, () => {
      const base = structuredClone(c.base);
      assert.deepEqual(strategicMerge(c.base, c.patch), c.want);
      assert.deepEqual(c.base, base, 'the base is not modified');
    });
  }
  it('refuses directives it does not implement', () => {
    assert.throws(() => strategicMerge({}, { $retainKeys: ['a'] }), StrategicMergeError);
    assert.throws(() => strategicMerge({}, { a: { $patch: 'bogus' } }), StrategicMergeError);
  });
  it('refuses a keyed list item without its key', () => {
    assert.throws(() => strategicMerge({}, { containers: [{ image: 'x' }] }), /merge key/);
  });
});
