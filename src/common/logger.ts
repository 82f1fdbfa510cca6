import { pino, type Logger, type LevelWithSilent } from 'pino';

export type { Logger };

export interface LoggerOptions {
  level?: LevelWithSilent | string;
  format?: 'json' | 'text';
}

/**
 * One logger for the whole process. `text` is pino's JSON reshaped into a single readable line
 * without a transport thread (pino-pretty would add a worker per process).
 */
export function createLogger(opts: LoggerOptions = {}): Logger {
  const level = (opts.level ?? 'info') as LevelWithSilent;
  if (opts.format === 'json') return pino({ level, base: { pid: process.pid } });
  return pino({ level, base: undefined, timestamp: false }, { write: (line: string) => process.stdout.write(toText(line)) });
}

function toText(line: string): string {
  const rec = JSON.parse(line) as Record<string, unknown>;
  const { level, msg, ...rest } = rec;
  const name = typeof level === 'number' ? (pino.levels.labels[level] ?? String(level)) : String(level);
  const extras = Object.entries(rest).map(([k, v]) => `${k}=${typeof v === 'string' ? v : JSON.stringify(v)}`).join(' ');
  return `${new Date().toISOString()} ${name.toUpperCase().padEnd(5)} ${msg ?? ''}${extras ? ' ' + extras : ''}\n`;
}

/** A silent logger for tests. */
export const silentLogger: Logger = pino({ level: 'silent' });
