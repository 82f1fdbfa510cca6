import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { pino } from 'pino';
import type { Logger } from '../../common/logger.ts';
import { exitCodeOnSignal } from './on-signal.ts';

function recordingLogger(): { logger: Logger; lines: () => { msg: string }[] } {
  const lines: { msg: string }[] = [];
  return { logger: pino({ level: 'info' }, { write: (line: string) => lines.push(JSON.parse(line) as { msg: string }) }) as unknown as Logger, lines: () => lines };
}

// process.emit runs the handlers as a delivered signal would, without one.
const signal = (name: NodeJS.Signals): boolean => process.emit(name as 'SIGTERM', name);

describe('exitCodeOnSignal', () => {
  const rows: { name: string; stop: () => Promise<void>; second: boolean; code: number; lines: string[] }[] = [
    { name: 'a drain that settles: 0', stop: async () => {}, second: false, code: 0, lines: ['shut down cleanly'] },
    { name: 'a drain that fails: 1', stop: async () => { throw new Error('stuck'); }, second: false, code: 1, lines: ['shutdown failed'] },
    { name: 'a second signal during the drain: 1 at once', stop: () => new Promise(() => {}), second: true, code: 1, lines: ['second signal: exiting without waiting for the drain'] },
  ];
  for (const row of rows) {
    it(row.name, async () => {
      const { logger, lines } = recordingLogger();
      const stops: NodeJS.Signals[] = [];
      const exited = exitCodeOnSignal(logger, (name) => { stops.push(name); return row.stop(); });
      signal('SIGTERM');
      if (row.second) signal('SIGINT');
      assert.equal(await exited, row.code);
      assert.deepEqual(stops, ['SIGTERM'], 'the drain runs once');
      assert.deepEqual(lines().map((l) => l.msg), row.lines);
      process.removeAllListeners('SIGTERM').removeAllListeners('SIGINT');
    });
  }
});
