import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { runInSlices, runToEnd, type SlicedJob } from './slices.ts';

/** Busy-waits `ms` (a unit of config work that cannot be split). */
function spin(ms: number): void {
  const end = performance.now() + ms;
  while (performance.now() < end) { /* work */ }
}

/** `units` units of `unitMs` each; returns how many ran and logs each unit's end into `events`. */
function* job(units: number, unitMs: number, events: string[]): SlicedJob<number> {
  for (let i = 0; i < units; i++) {
    spin(unitMs);
    events.push(`unit ${i}`);
    yield;
  }
  return units;
}

describe('runToEnd', () => {
  it('runs every unit without giving the loop a turn, and returns the result', () => {
    const events: string[] = [];
    setImmediate(() => events.push('immediate'));
    assert.equal(runToEnd(job(5, 0, events)), 5);
    assert.deepEqual(events, ['unit 0', 'unit 1', 'unit 2', 'unit 3', 'unit 4']);
  });
});

describe('runInSlices', () => {
  it('lets the event loop run between slices once a slice has used its budget', async () => {
    const events: string[] = [];
    setImmediate(() => events.push('immediate'));
    // 10 units of 3 ms in 5 ms slices: the loop gets a turn after every second unit.
    assert.equal(await runInSlices(job(10, 3, events), 5), 10);
    const turn = events.indexOf('immediate');
    assert.ok(turn > 0 && turn < 4, `the loop got its turn after unit ${turn}: ${events.join(', ')}`);
  });

  it('ends a slice at the first yield past its budget', async () => {
    // The loop's turns, counted by an immediate that re-arms itself, against the units done meanwhile.
    const events: string[] = [];
    let ticking = true;
    const tick = (): void => {
      events.push('turn');
      if (ticking) setImmediate(tick);
    };
    setImmediate(tick);
    // 3 ms units in 5 ms slices: two units, then a turn (counted in units, so a busy machine cannot make it flaky).
    await runInSlices(job(30, 3, events), 5);
    ticking = false;
    const runs = events.join(' ').split('turn').map((between) => between.trim().split(/\s+/).filter((w) => w === 'unit').length);
    assert.ok(Math.max(...runs) <= 2, `units between turns: ${runs.join(' ')}`);
    assert.ok(runs.filter((n) => n > 0).length >= 15, `units between turns: ${runs.join(' ')}`);
  });

  it('runs a job that fits in one slice without waiting for a turn', async () => {
    const events: string[] = [];
    setImmediate(() => events.push('immediate'));
    const done = runInSlices(job(3, 0, events), 1_000);
    events.push('returned');
    await done;
    assert.deepEqual(events.slice(0, 4), ['unit 0', 'unit 1', 'unit 2', 'returned']);
  });

  it('rejects with the error a unit throws', async () => {
    function* failing(): SlicedJob<number> {
      yield;
      throw new Error('broken unit');
    }
    await assert.rejects(runInSlices(failing(), 10), /broken unit/);
  });
});
