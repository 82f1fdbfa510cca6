import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { DEFAULT_DRAIN_GRACE_MS, shutdownPlan } from './proxy-shutdown.ts';

describe('shutdownPlan', () => {
  const rows: ReadonlyArray<{ name: string; env: Record<string, string>; want: { acceptForMs: number; drainMs: number } }> = [
    { name: 'no variables: the default drain', env: {}, want: { acceptForMs: 0, drainMs: DEFAULT_DRAIN_GRACE_MS } },
    { name: 'min and max: accept for min, drain the rest less the kill margin', env: { CONNECTION_MIN_TERMINATION_DEADLINE: '5', TERMINATION_GRACE_PERIOD_SECONDS: '30' }, want: { acceptForMs: 5000, drainMs: 24_000 } },
    { name: 'min equal to max: the margin comes out of the accept time', env: { CONNECTION_MIN_TERMINATION_DEADLINE: '10', TERMINATION_GRACE_PERIOD_SECONDS: '10' }, want: { acceptForMs: 9000, drainMs: 0 } },
    { name: 'max only', env: { TERMINATION_GRACE_PERIOD_SECONDS: '3' }, want: { acceptForMs: 0, drainMs: 2000 } },
    { name: 'max 0: exit at once', env: { CONNECTION_MIN_TERMINATION_DEADLINE: '0', TERMINATION_GRACE_PERIOD_SECONDS: '0' }, want: { acceptForMs: 0, drainMs: 0 } },
    { name: 'unusable values are ignored', env: { CONNECTION_MIN_TERMINATION_DEADLINE: '-1', TERMINATION_GRACE_PERIOD_SECONDS: 'soon' }, want: { acceptForMs: 0, drainMs: DEFAULT_DRAIN_GRACE_MS } },
  ];
  for (const row of rows) it(row.name, () => assert.deepEqual(shutdownPlan(row.env), row.want));
});
