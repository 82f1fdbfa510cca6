import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import v8 from 'node:v8';
import { GROWN_NEW_SPACE_BYTES, startupGc } from './startup-gc.ts';

describe('startupGc: one memory-reducing GC after the first config, when the young generation grew (on unless SWITCHBOARD_STARTUP_GC=0)', () => {
  const on = { SWITCHBOARD_STARTUP_GC: '1' };
  const rows = [
    { name: 'grown (a 10k-route config): collects', env: on, bytes: 64 * 1024 * 1024, collects: 1 },
    { name: 'at the threshold: collects', env: on, bytes: GROWN_NEW_SPACE_BYTES, collects: 1 },
    { name: 'small (the quickstart: 32 MiB after loading modules): left alone', env: on, bytes: 32 * 1024 * 1024, collects: 0 },
    { name: 'SWITCHBOARD_SEMI_SPACE_MIB=8 (2 × 8 MiB at most): nothing to give back', env: on, bytes: 16 * 1024 * 1024, collects: 0 },
    { name: 'on by default', env: {}, bytes: 64 * 1024 * 1024, collects: 1 },
    { name: 'SWITCHBOARD_STARTUP_GC=on', env: { SWITCHBOARD_STARTUP_GC: ' ON ' }, bytes: 64 * 1024 * 1024, collects: 1 },
    { name: 'SWITCHBOARD_IDLE_GC does not decide it', env: { SWITCHBOARD_IDLE_GC: '0' }, bytes: 64 * 1024 * 1024, collects: 1 },
    { name: 'SWITCHBOARD_STARTUP_GC=0', env: { SWITCHBOARD_IDLE_GC: '1', SWITCHBOARD_STARTUP_GC: '0' }, bytes: 64 * 1024 * 1024, collects: 0 },
    { name: 'SWITCHBOARD_STARTUP_GC=off', env: { SWITCHBOARD_STARTUP_GC: 'off' }, bytes: 64 * 1024 * 1024, collects: 0 },
  ];
  for (const row of rows) {
    it(row.name, () => {
      let collects = 0;
      startupGc(row.env, () => row.bytes, () => () => void collects++)?.();
      assert.equal(collects, row.collects);
    });
  }

  it('a V8 that gives no gc function: nothing happens', () => {
    assert.doesNotThrow(() => startupGc(on, () => GROWN_NEW_SPACE_BYTES, () => undefined)?.());
  });

  it('for real: the young generation a burst of surviving allocations grew is given back', () => {
    // ~100 MiB of small objects kept alive across scavenges: V8 grows new space to its maximum.
    const kept: object[][] = [[]];
    for (let i = 0; i < 1_500_000; i++) kept[0]?.push({ i, s: `x${i}` });
    const before = newSpaceBytes();
    kept.pop();
    startupGc(on)?.();
    const after = newSpaceBytes();
    assert.ok(before >= GROWN_NEW_SPACE_BYTES, `the burst grew new space to ${before} bytes`);
    assert.ok(after < before / 2, `new space ${before} → ${after} bytes`);
  });
});

function newSpaceBytes(): number {
  return v8.getHeapSpaceStatistics().find((s) => s.space_name === 'new_space')?.space_size ?? 0;
}
