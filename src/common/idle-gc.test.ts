import assert from 'node:assert/strict';
import { describe, it, mock } from 'node:test';
import v8 from 'node:v8';
import vm from 'node:vm';
import { IdleGc, memoryReducingGc } from './idle-gc.ts';

function newSpaceCommitted(): number {
  return v8.getHeapSpaceStatistics().find((space) => space.space_name === 'new_space')?.physical_space_size ?? NaN;
}

describe('memoryReducingGc', () => {
  it('gives back the young generation a burst of surviving allocations grew', () => {
    const collect = memoryReducingGc({ SWITCHBOARD_IDLE_GC: '1' });
    assert.ok(collect, 'V8 gave a gc function');
    // Much of it survives scavenges, so V8 grows the young generation (as receiving a config does).
    let keep: object[] = [];
    for (let i = 0; i < 600_000; i++) {
      keep.push({ i, text: `entry ${i}` });
      if (keep.length > 150_000) keep = keep.slice(75_000);
    }
    const grown = newSpaceCommitted();
    keep.length = 0;
    collect();
    const after = newSpaceCommitted();
    assert.ok(grown > 2 * 1024 * 1024, `the young generation grew (${grown} bytes)`);
    assert.ok(after < grown / 2, `a memory-reducing GC shrinks it: ${grown} → ${after} bytes`);
  });

  const switches: { name: string; value: string | undefined; on: boolean }[] = [
    { name: 'unset: off (it costs edit latency)', value: undefined, on: false },
    { name: '0: off', value: '0', on: false },
    { name: 'off: off', value: 'OFF', on: false },
    { name: 'anything else: off', value: 'yes please', on: false },
    { name: '1: on', value: '1', on: true },
    { name: 'on: on', value: ' On ', on: true },
  ];
  for (const row of switches) {
    it(`SWITCHBOARD_IDLE_GC ${row.name}`, () => {
      const env = row.value === undefined ? {} : { SWITCHBOARD_IDLE_GC: row.value };
      assert.equal(typeof memoryReducingGc(env), row.on ? 'function' : 'undefined');
    });
  }

  it('leaves no gc in contexts created later', () => {
    memoryReducingGc({ SWITCHBOARD_IDLE_GC: '1' });
    assert.equal(vm.runInNewContext('typeof gc'), 'undefined');
  });
});

describe('IdleGc', () => {
  const rows: { name: string; steps: ('busy' | 'idle' | 'tick' | 'half')[]; collected: number }[] = [
    { name: 'after work and the delay', steps: ['busy', 'idle', 'tick'], collected: 1 },
    { name: 'not before the delay', steps: ['busy', 'idle', 'half'], collected: 0 },
    { name: 'not without work', steps: ['idle', 'tick'], collected: 0 },
    { name: 'not while working', steps: ['busy', 'tick'], collected: 0 },
    { name: 'new work restarts the wait', steps: ['busy', 'idle', 'half', 'busy', 'idle', 'half'], collected: 0 },
    { name: 'new work then the whole delay', steps: ['busy', 'idle', 'half', 'busy', 'idle', 'tick'], collected: 1 },
    { name: 'once per quiet spell', steps: ['busy', 'idle', 'tick', 'idle', 'tick'], collected: 1 },
    { name: 'again after more work', steps: ['busy', 'idle', 'tick', 'busy', 'idle', 'tick'], collected: 2 },
    { name: 'idle twice arms one timer', steps: ['busy', 'idle', 'idle', 'tick', 'tick'], collected: 1 },
  ];
  for (const row of rows) {
    it(row.name, () => {
      mock.timers.enable({ apis: ['setTimeout'] });
      try {
        let collected = 0;
        const idleGc = new IdleGc(1000, () => collected++);
        for (const step of row.steps) {
          if (step === 'busy') idleGc.busy();
          else if (step === 'idle') idleGc.idle();
          else mock.timers.tick(step === 'tick' ? 1000 : 500);
        }
        assert.equal(collected, row.collected);
        idleGc.stop();
      } finally {
        mock.timers.reset();
      }
    });
  }

  it('a collect that throws is not the thread’s failure', () => {
    mock.timers.enable({ apis: ['setTimeout'] });
    try {
      const idleGc = new IdleGc(10, () => { throw new Error('refused'); });
      idleGc.busy();
      idleGc.idle();
      assert.doesNotThrow(() => mock.timers.tick(10));
    } finally {
      mock.timers.reset();
    }
  });
});
