import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import type { KubeObject } from '../../api/gateway/object.ts';
import { buildListeners, type ListenerOwner } from './listener.ts';
import { IndexCache, indexObjects } from './snapshot.ts';

/**
 * Listeners outlive their translation (the route memos keep route entries, and their attachments
 * hold the listener): what a listener's closures capture stays alive with it. They must not
 * capture the snapshot they were built from — at 10k routes each edit's snapshot (its per-kind
 * lists, ~170 KB) stayed alive per edited route (issue 15: the config thread's heap grew by edits).
 */
setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

const objects: KubeObject[] = [
  { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'team', labels: { tier: 'a' } } },
  ...Array.from({ length: 50 }, (_, i): KubeObject => ({ apiVersion: 'gateway.networking.k8s.io/v1', kind: 'HTTPRoute', metadata: { name: `r${i}`, namespace: 'team' }, spec: {} })),
];
const owner: ListenerOwner = { apiVersion: 'gateway.networking.k8s.io/v1', group: 'gateway.networking.k8s.io', kind: 'Gateway', namespace: 'team', name: 'gw', generation: 1 };

/** Whether what `make` returns in `weak` is collected while what it returns in `kept` stays. */
async function collectedWhileKept(make: () => { kept: unknown; weak: object }): Promise<boolean> {
  // Made in a function of its own: `weak` must not stay in this async function's frame.
  const { kept, ref } = ((): { kept: unknown; ref: WeakRef<object> } => {
    const made = make();
    return { kept: made.kept, ref: new WeakRef(made.weak) };
  })();
  // Past the current job: a WeakRef's target is kept until then.
  await new Promise((ok) => setImmediate(ok));
  gc();
  assert.ok(kept !== undefined);
  return ref.deref() === undefined;
}

describe('listener closures do not keep the snapshot alive', () => {
  for (const from of ['Same', 'All', 'Selector', 'Unknown']) {
    it(`allowedRoutes.namespaces.from ${from}`, async () => {
      const collected = await collectedWhileKept(() => {
        const snapshot = indexObjects(objects);
        const spec = { name: 'http', port: 80, protocol: 'HTTP', allowedRoutes: { namespaces: { from, selector: { matchLabels: { tier: 'a' } } } } };
        const [listener] = buildListeners(owner, { namespace: 'team', name: 'gw' }, [spec], snapshot);
        assert.equal(listener?.allowsRoutesFrom('team'), from !== 'Unknown');
        return { kept: listener, weak: snapshot };
      });
      assert.ok(collected, 'the listener keeps its snapshot alive');
    });
  }

  it('namespaceLabels keeps neither the per-kind lists nor the index cache', async () => {
    const collected = await collectedWhileKept(() => {
      const cache = new IndexCache();
      const labelsOf = indexObjects(objects, { cache }).namespaceLabels;
      assert.deepEqual(labelsOf('team'), { tier: 'a', 'kubernetes.io/metadata.name': 'team' });
      return { kept: labelsOf, weak: cache };
    });
    assert.ok(collected, 'namespaceLabels keeps the cache given to indexObjects alive');
  });
});
