import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { CompiledLifecycle } from './lifecycle.ts';

describe('CompiledLifecycle', () => {
  it('closes right away when no request is inside', async () => {
    const l = new CompiledLifecycle();
    let closed = 0;
    l.onRetire(() => closed++);
    await l.retire(60_000);
    assert.equal(closed, 1);
  });

  it('waits for the last request that entered, then closes once', async () => {
    const l = new CompiledLifecycle();
    let closed = 0;
    l.onRetire(() => closed++);
    l.enter();
    l.enter();
    const retired = l.retire(60_000);
    l.leave();
    await new Promise((resolve) => setImmediate(resolve));
    assert.equal(closed, 0, 'one request is still inside');
    l.leave();
    await retired;
    assert.equal(closed, 1);
    await l.retire(0);
    assert.equal(closed, 1);
  });

  it('gives up waiting after maxWaitMs, or at once when hurried', async () => {
    const l = new CompiledLifecycle();
    let closed = 0;
    l.onRetire(() => closed++);
    l.enter();
    await l.retire(10);
    assert.equal(closed, 1);
    const h = new CompiledLifecycle();
    h.onRetire(() => closed++);
    h.enter();
    const retired = h.retire(60_000);
    h.hurry();
    await retired;
    assert.equal(closed, 2);
  });

  it('a failing closer is reported and the others still run', async () => {
    const l = new CompiledLifecycle();
    const errors: unknown[] = [];
    let closed = 0;
    l.onRetire(() => {
      throw new Error('boom');
    });
    l.onRetire(() => closed++);
    await l.retire(0, (err) => errors.push(err));
    assert.equal(closed, 1);
    assert.equal(errors.length, 1);
  });
});
