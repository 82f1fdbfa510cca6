import { pino, type Logger, type LevelWithSilent } from 'pino';
import { REDACTED, SecretMatcher } from './secret-matcher.ts';

export type { Logger };

export interface LoggerOptions {
  level?: LevelWithSilent | string;
  format?: 'json' | 'text';
}

/**
 * Request headers that carry credentials. Wherever a logged object holds a headers map (an error
 * carrying a request, a record a feature logs) these are shown as "[redacted]".
 */
export const CREDENTIAL_HEADERS: readonly string[] = ['authorization', 'proxy-authorization', 'cookie', 'set-cookie', 'x-api-key', 'api-key', 'x-goog-api-key'];

const HEADER_HOLDERS = ['headers', 'req.headers', 'request.headers', 'res.headers', 'response.headers', 'err.headers', 'err.request.headers'];
const REDACT_PATHS = HEADER_HOLDERS.flatMap((holder) => CREDENTIAL_HEADERS.flatMap((h) => [`${holder}["${h}"]`, `${holder}["${h.replace(/(^|-)[a-z]/g, (c) => c.toUpperCase())}"]`]));

/**
 * Secret values the process holds (its config's credentials, keys and their derived forms):
 * every log line is scrubbed of them before it is written, whatever logged it (an error message
 * echoing a header, a parse error quoting a key). Replaced as a whole on each config.
 */
let loggedSecrets = new SecretMatcher([]);

/** Sets the values every log line of this process is scrubbed of (the translator's secretValues). */
export function setLoggedSecrets(values: Iterable<string>): void {
  const forms: string[] = [];
  // Lines are JSON: a value with quotes, backslashes or newlines appears escaped.
  for (const value of values) forms.push(value, JSON.stringify(value).slice(1, -1));
  loggedSecrets = new SecretMatcher(forms);
}

/** A log line with every registered secret value replaced by "[redacted]". */
export function scrubLogLine(line: string): string {
  return loggedSecrets.size === 0 ? line : loggedSecrets.scrub(line);
}

/**
 * One logger for the whole process. `text` is pino's JSON reshaped into a single readable line
 * without a transport thread (pino-pretty would add a worker per process). Both go through
 * scrubLogLine, and credential headers are redacted by path.
 */
export function createLogger(opts: LoggerOptions = {}): Logger {
  const level = (opts.level ?? 'info') as LevelWithSilent;
  const redact = { paths: REDACT_PATHS, censor: REDACTED };
  if (opts.format === 'json') return pino({ level, base: { pid: process.pid }, redact }, { write: (line: string) => process.stdout.write(scrubLogLine(line)) });
  return pino({ level, base: undefined, timestamp: false, redact }, { write: (line: string) => process.stdout.write(toText(scrubLogLine(line))) });
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
