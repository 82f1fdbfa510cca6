import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { LocalRateLimiter, type LocalRateLimitEntry } from './local.ts';

type Step = { at: number; admit: boolean | number } | { at: number; usage: number };

const cases: { name: string; entries: LocalRateLimitEntry[]; steps: Step[] }[] = [
  {
    name: '2 requests per second: the third waits for the refill',
    entries: [{ requests: 2, unit: 'Seconds' }],
    steps: [{ at: 0, admit: true }, { at: 0, admit: true }, { at: 0, admit: 1 }, { at: 499, admit: 1 }, { at: 500, admit: true }, { at: 500, admit: 1 }],
  },
  {
    name: 'burst adds to the capacity but not the rate',
    entries: [{ requests: 1, unit: 'Minutes', burst: 2 }],
    steps: [{ at: 0, admit: true }, { at: 0, admit: true }, { at: 0, admit: true }, { at: 0, admit: 60 }, { at: 30_000, admit: 30 }, { at: 60_000, admit: true }],
  },
  {
    name: 'tokens are charged after completion and hold back later requests',
    entries: [{ tokens: 100, unit: 'Minutes' }],
    steps: [{ at: 0, admit: true }, { at: 0, admit: true }, { at: 1, usage: 130 }, { at: 1, admit: 18 }, { at: 18_000, admit: 1 }, { at: 18_100, admit: true }],
  },
  {
    name: 'a request and a token limit together: request buckets are only charged when all admit',
    entries: [{ requests: 5, unit: 'Hours' }, { tokens: 10, unit: 'Seconds' }],
    steps: [{ at: 0, admit: true }, { at: 0, usage: 20 }, { at: 0, admit: 1 }, { at: 0, admit: 1 }, { at: 1001, admit: true }, { at: 1001, admit: true }, { at: 1001, admit: true }, { at: 1001, admit: true }, { at: 1001, admit: 719 }],
  },
];

describe('LocalRateLimiter', () => {
  for (const c of cases) {
    it(c.name, () => {
      let now = 0;
      const limiter = new LocalRateLimiter(c.entries, () => now);
      c.steps.forEach((step, i) => {
        now = step.at;
        if ('usage' in step) return limiter.recordUsage(step.usage);
        const d = limiter.admit();
        if (step.admit === true) assert.equal(d.allowed, true, `step ${i}`);
        else {
          assert.equal(d.allowed, false, `step ${i}`);
          if (!d.allowed) {
            assert.equal(d.status, 429);
            assert.equal(d.retryAfterS, step.admit, `step ${i} retry-after`);
            assert.deepEqual(d.headers, [['retry-after', String(step.admit)]]);
          }
        }
      });
    });
  }

  it('reports whether token usage must be recorded', () => {
    assert.equal(new LocalRateLimiter([{ requests: 1, unit: 'Seconds' }]).countsTokens, false);
    assert.equal(new LocalRateLimiter([{ tokens: 1, unit: 'Seconds' }]).countsTokens, true);
  });
});
