/**
 * The CPU cost of one default access-log line, in process (issue 14 item 4: ≤ 5 µs): the logger
 * `switchboard run` makes (pino, JSON, the process's buffered stdout) writing the record the
 * lifecycle writes, with stdout sent to /dev/null (run this as `node bench/access-log-line.ts >
 * /dev/null`; the result goes to stderr). Unlike the end-to-end run (`bench/run.ts --access-log`),
 * whose difference of two noisy CPU medians on a 2-core machine moved between −20 and +15 µs
 * between runs, this isolates the line: CPU time (process.cpuUsage) per line over a fixed count,
 * best of several rounds.
 */
import { createLogger, flushLogs } from '../src/common/logger.ts';
import { accessLog } from '../src/proxy/telemetry/access-log.ts';

const lines = 200_000;
const rounds = 7;
const logger = createLogger({ level: 'info', format: 'json' });
let best = Infinity;
for (let r = 0; r < rounds; r++) {
  const before = process.cpuUsage();
  for (let i = 0; i < lines; i++) {
    accessLog(logger, { method: 'GET', path: '/api/items', status: 200, durationMs: 0.4, route: 'default/bench', backend: 'default/upstream:8080', bytes: 1234 + (i & 7) });
  }
  flushLogs();
  const used = process.cpuUsage(before);
  best = Math.min(best, (used.user + used.system) / lines);
}
process.stderr.write(`access log line: ${best.toFixed(2)} CPU-µs (best of ${rounds} rounds of ${lines} lines)\n`);
