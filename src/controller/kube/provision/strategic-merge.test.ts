/**
 * Strategic merge against the cases the Kubernetes patch documentation shows
 * (update-api-object-kubectl-patch; the directives' examples from kubernetes/community
 * contributors/devel/sig-api-machinery/strategic-merge-patch.md, "docs:" below).
 */
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
  // docs: retainKeys "Map" example — the union's fields not listed are cleared without being set to null.
  { name: '$retainKeys clears the fields it does not list', base: { union: { foo: 'a', other: 'b' } }, patch: { union: { $retainKeys: ['another', 'bar'], another: 'd', bar: 'c' } }, want: { union: { another: 'd', bar: 'c' } } },
  {
    // The union Kubernetes declares retainKeys on: a Deployment's strategy (Recreate drops rollingUpdate).
    name: '$retainKeys on a Deployment strategy',
    base: { strategy: { type: 'RollingUpdate', rollingUpdate: { maxSurge: 1 } } },
    patch: { strategy: { $retainKeys: ['type'], type: 'Recreate' } },
    want: { strategy: { type: 'Recreate' } },
  },
  { name: '$retainKeys keeps a listed base field the patch does not set', base: { v: { a: 1, b: 2, c: 3 } }, patch: { v: { $retainKeys: ['a', 'b'], b: 9 } }, want: { v: { a: 1, b: 9 } } },
  // docs: deleteFromPrimitiveList example — finalizers [a, b, c] less [b, c] is [a].
  { name: '$deleteFromPrimitiveList removes the listed values', base: { finalizers: ['a', 'b', 'c'] }, patch: { '$deleteFromPrimitiveList/finalizers': ['b', 'c'] }, want: { finalizers: ['a'] } },
  { name: '$deleteFromPrimitiveList removes every duplicate (docs note)', base: { args: ['x', 'y', 'x'] }, patch: { '$deleteFromPrimitiveList/args': ['x'] }, want: { args: ['y'] } },
  { name: '$deleteFromPrimitiveList on an absent list changes nothing', base: { replicas: 1 }, patch: { '$deleteFromPrimitiveList/args': ['x'] }, want: { replicas: 1 } },
  {
    name: '$deleteFromPrimitiveList inside a keyed list item (container args)',
    base: podSpec([{ name: 'proxy', args: ['proxy', '--log-level', 'info', '--verbose'] }]),
    patch: podSpec([{ name: 'proxy', '$deleteFromPrimitiveList/args': ['--verbose'] }]),
    want: podSpec([{ name: 'proxy', args: ['proxy', '--log-level', 'info'] }]),
  },
  // docs: setElementOrder "List of Primitives" example.
  { name: '$setElementOrder reorders a primitive list', base: { finalizers: ['a', 'b', 'c'] }, patch: { '$setElementOrder/finalizers': ['b', 'c', 'a'] }, want: { finalizers: ['b', 'c', 'a'] } },
  {
    // docs: setElementOrder "List of Maps" example — each directive item holds only the merge key.
    name: '$setElementOrder reorders a keyed list',
    base: podSpec([{ name: 'a', image: 'ia' }, { name: 'b', image: 'ib' }, { name: 'c', image: 'ic' }]),
    patch: podSpec([], { '$setElementOrder/containers': [{ name: 'b' }, { name: 'c' }, { name: 'a' }] }),
    want: podSpec([{ name: 'b', image: 'ib' }, { name: 'c', image: 'ic' }, { name: 'a', image: 'ia' }]),
  },
  {
    // The proposal's motivating case: env entries may refer to earlier ones, so a new entry goes where the order says.
    name: '$setElementOrder places a new keyed item and keeps the others',
    base: podSpec([{ name: 'proxy', env: [{ name: 'A', value: '1' }, { name: 'C', value: '$(B)' }] }]),
    patch: podSpec([{ name: 'proxy', '$setElementOrder/env': [{ name: 'A' }, { name: 'B' }, { name: 'C' }], env: [{ name: 'B', value: '2' }] }]),
    want: podSpec([{ name: 'proxy', env: [{ name: 'A', value: '1' }, { name: 'B', value: '2' }, { name: 'C', value: '$(B)' }] }]),
  },
  {
    // Items the directive does not name (server-only) are merged in by the base's order: x (0)
    // before b (3), y (2) before b (3), then the named b, a in the directive's order.
    name: '$setElementOrder merges unnamed items in by the base order',
    base: { tolerations: [{ key: 'x' }, { key: 'a' }, { key: 'y' }, { key: 'b' }] },
    patch: { '$setElementOrder/tolerations': [{ key: 'b' }, { key: 'a' }] },
    want: { tolerations: [{ key: 'x' }, { key: 'y' }, { key: 'b' }, { key: 'a' }] },
  },
  {
    // A new named item (not in the base) goes before the unnamed item it meets.
    name: '$setElementOrder puts a new named item before an unnamed one',
    base: { tolerations: [{ key: 'x' }, { key: 'a' }] },
    patch: { '$setElementOrder/tolerations': [{ key: 'n' }, { key: 'a' }], tolerations: [{ key: 'n' }] },
    want: { tolerations: [{ key: 'n' }, { key: 'x' }, { key: 'a' }] },
  },
];

describe('strategicMerge', () => {
  for (const c of CASES) {
    it(c.name, () => {
      const base = structuredClone(c.base);
      assert.deepEqual(strategicMerge(c.base, c.patch), c.want);
      assert.deepEqual(c.base, base, 'the base is not modified');
    });
  }
  it('refuses unknown directives', () => {
    assert.throws(() => strategicMerge({}, { $bogus: ['a'] }), StrategicMergeError);
    assert.throws(() => strategicMerge({}, { a: { $patch: 'bogus' } }), StrategicMergeError);
  });
  const REFUSED: ReadonlyArray<{ name: string; patch: JsonMap; error: RegExp }> = [
    { name: '$retainKeys not listing a patched field (the API server refuses it too)', patch: { v: { $retainKeys: ['a'], b: 1 } }, error: /\.v\.\$retainKeys: \.v\.b is set by the patch but not listed/ },
    { name: '$retainKeys not a list of names', patch: { v: { $retainKeys: 'a' } }, error: /must be a list of field names/ },
    { name: '$deleteFromPrimitiveList with maps', patch: { '$deleteFromPrimitiveList/args': [{ a: 1 }] }, error: /list of primitive values/ },
    { name: '$setElementOrder not naming a patched item', patch: { '$setElementOrder/args': ['a'], args: ['a', 'b'] }, error: /"b" is not listed/ },
    { name: '$setElementOrder in another order than the patch list', patch: { '$setElementOrder/tolerations': [{ key: 'a' }, { key: 'b' }], tolerations: [{ key: 'b' }, { key: 'a' }] }, error: /another order/ },
    { name: '$setElementOrder item without its merge key', patch: { '$setElementOrder/tolerations': [{ value: 'x' }] }, error: /merge key/ },
  ];
  for (const c of REFUSED) {
    it(`refuses ${c.name}`, () => {
      assert.throws(() => strategicMerge({ v: { a: 0 }, args: ['a'], tolerations: [{ key: 'a' }, { key: 'b' }] }, c.patch), c.error);
    });
  }
  it('refuses a keyed list item without its key', () => {
    assert.throws(() => strategicMerge({}, { containers: [{ image: 'x' }] }), /merge key/);
  });
});
