import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { AiBackendIR, AiProviderIR } from '../../../ir/ai.ts';
import { compileRetryPolicy } from '../../policies/traffic/retry/retry.ts';
import type { RetryPolicySpec } from '../../../ir/policy.ts';
import { backoff, ProviderSchedule, type AttemptFailure } from './failover.ts';
import { ProviderPicker } from './picker.ts';

const provider = (name: string) => ({ name, provider: { kind: 'providerA' } }) as unknown as AiProviderIR;
const groups = (...names: string[][]): AiBackendIR['groups'] => names.map((g) => ({ providers: g.map(provider) }));

const S503: AttemptFailure = { status: 503, failover: true };
const S429: AttemptFailure = { status: 429, failover: true };
const S408: AttemptFailure = { status: 408, failover: false };
const S400: AttemptFailure = { status: 400, failover: false };
const REFUSED: AttemptFailure = { connectFailure: true, failover: true };
const TIMEOUT: AttemptFailure = { failover: true };

/** The providers a request is sent to when every attempt fails with the next failure in `failures`. */
function walk(g: AiBackendIR['groups'], retry: RetryPolicySpec | undefined, failures: readonly AttemptFailure[]): { tried: string[]; delays: number[] } {
  const schedule = new ProviderSchedule(new ProviderPicker(g), retry ? compileRetryPolicy(retry) : undefined);
  const tried = [schedule.first()!.name];
  const delays: number[] = [];
  for (const failure of failures) {
    const next = schedule.next(failure);
    if (!next) break;
    tried.push(next.provider.name);
    delays.push(next.delayMs);
  }
  return { tried, delays };
}

describe('ProviderSchedule: failover and traffic.retry combined', () => {
  const rows: { name: string; groups: AiBackendIR['groups']; retry?: RetryPolicySpec; failures: AttemptFailure[]; tried: string[]; delays: number[] }[] = [
    { name: 'no retry policy: one pass over the groups, failover on 5xx', groups: groups(['a', 'b'], ['c']), failures: [S503, S503, S503, S503], tried: ['a', 'b', 'c'], delays: [0, 0] },
    { name: 'no retry policy: a 4xx is final', groups: groups(['a', 'b']), failures: [S400], tried: ['a'], delays: [] },
    { name: 'no retry policy, one provider: nothing after the first failure', groups: groups(['a']), failures: [S503], tried: ['a'], delays: [] },
    {
      name: 'one provider: a listed status is retried on it after the backoff, as many times as the policy allows',
      groups: groups(['a']), retry: { codes: [503], attempts: 2, backoff: '25ms' }, failures: [S503, S503, S503], tried: ['a', 'a', 'a'], delays: [25, 25],
    },
    { name: 'one provider: a status the policy does not list is not retried', groups: groups(['a']), retry: { codes: [503], attempts: 2 }, failures: [S429], tried: ['a'], delays: [] },
    { name: 'one provider: a connect failure is retried whatever the codes', groups: groups(['a']), retry: { codes: [], attempts: 1 }, failures: [REFUSED, REFUSED], tried: ['a', 'a'], delays: [0] },
    { name: 'one provider: a timeout is not a retried failure', groups: groups(['a']), retry: { codes: [503], attempts: 3 }, failures: [TIMEOUT], tried: ['a'], delays: [] },
    {
      name: 'failover is free: every provider gets its try before a retry is spent, then a new pass starts at the top',
      groups: groups(['a'], ['b']), retry: { codes: [503], attempts: 1, backoff: '10ms' }, failures: [S503, S503, S503, S503], tried: ['a', 'b', 'a'], delays: [0, 10],
    },
    {
      name: 'in a later pass every attempt is a retry: one try per provider plus the attempts',
      groups: groups(['a', 'b'], ['c']), retry: { codes: [503], attempts: 2 }, failures: [S503, S503, S503, S503, S503, S503], tried: ['a', 'b', 'c', 'b', 'a'], delays: [0, 0, 0, 0],
    },
    {
      name: 'in a later pass a failover status the policy does not list ends the request',
      groups: groups(['a', 'b']), retry: { codes: [503], attempts: 3 }, failures: [S503, S503, S429, S503], tried: ['a', 'b', 'b'], delays: [0, 0],
    },
    {
      name: 'a status only the policy lists (408) spends a retry and re-picks the next provider',
      groups: groups(['a', 'b']), retry: { codes: [408], attempts: 1 }, failures: [S408, S408], tried: ['a', 'b'], delays: [0],
    },
    {
      name: 'the budget is per request, shared across failover: attempts 1 allows one retry in all',
      groups: groups(['a', 'b']), retry: { codes: [408, 503], attempts: 1 }, failures: [S408, S503, S503], tried: ['a', 'b'], delays: [0],
    },
    { name: 'attempts 0 disables retries (failover stays)', groups: groups(['a', 'b']), retry: { codes: [503], attempts: 0 }, failures: [S503, S503], tried: ['a', 'b'], delays: [0] },
  ];
  for (const row of rows) {
    it(row.name, () => {
      const { tried, delays } = walk(row.groups, row.retry, row.failures);
      assert.deepEqual(tried, row.tried);
      assert.deepEqual(delays, row.delays);
    });
  }

  const holds: { name: string; retry?: RetryPolicySpec; status: number; held: boolean }[] = [
    { name: '429 without a policy (failover)', status: 429, held: true },
    { name: '502 without a policy (failover)', status: 502, held: true },
    { name: '404 without a policy', status: 404, held: false },
    { name: '408 listed in retry.codes', retry: { codes: [408] }, status: 408, held: true },
    { name: '408 listed, but attempts 0', retry: { codes: [408], attempts: 0 }, status: 408, held: false },
    { name: '200 never', retry: { codes: [408] }, status: 200, held: false },
  ];
  for (const row of holds) {
    it(`holds back an answer: ${row.name} → ${row.held}`, () => {
      const schedule = new ProviderSchedule(new ProviderPicker(groups(['a'])), row.retry ? compileRetryPolicy(row.retry) : undefined);
      assert.equal(schedule.holdsBack(row.status), row.held);
    });
  }
});

describe('backoff', () => {
  const source = () => {
    const listeners: (() => void)[] = [];
    return {
      aborted: false,
      onAbort(l: () => void) {
        listeners.push(l);
        return () => listeners.splice(listeners.indexOf(l), 1);
      },
      abort() {
        this.aborted = true;
        for (const l of [...listeners]) l();
      },
      get listening() {
        return listeners.length;
      },
    };
  };

  it('waits the backoff and stops listening for the client', async () => {
    const s = source();
    const started = Date.now();
    await backoff(40, s);
    assert.ok(Date.now() - started >= 35, 'waited');
    assert.equal(s.listening, 0);
  });

  it('ends at once when the client goes away', async () => {
    const s = source();
    const started = Date.now();
    const waiting = backoff(5_000, s);
    setTimeout(() => s.abort(), 10);
    await waiting;
    assert.ok(Date.now() - started < 1000);
  });
});
