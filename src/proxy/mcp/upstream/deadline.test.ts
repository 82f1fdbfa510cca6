import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { callDeadline, UpstreamTimeoutError } from './deadline.ts';

describe('callDeadline', () => {
  it('no timeout: the caller signal and errors unchanged', () => {
    const caller = new AbortController();
    const d = callDeadline('t', undefined, caller.signal);
    assert.equal(d.signal, caller.signal);
    const e = new Error('x');
    assert.equal(d.explain(e), e);
  });
  it('the deadline ending the exchange: a JSON-RPC 504 upstream_timeout', async () => {
    const d = callDeadline('t', 20, undefined);
    await new Promise((r) => setTimeout(r, 40));
    assert.ok(d.signal?.aborted);
    const err = d.explain(new Error('aborted'));
    assert.ok(err instanceof UpstreamTimeoutError);
    assert.equal(err.code, -32603);
    assert.deepEqual(err.data, { status: 504, code: 'upstream_timeout' });
  });
  it('the caller aborting first: its error stays', () => {
    const caller = new AbortController();
    const d = callDeadline('t', 10_000, caller.signal);
    caller.abort();
    assert.ok(d.signal?.aborted);
    const e = new Error('aborted');
    assert.equal(d.explain(e), e);
  });
});
