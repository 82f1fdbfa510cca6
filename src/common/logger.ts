import { pino, type Logger, type LevelWithSilent } from 'pino';
import type { LogFilter, LogModule } from './log-filter.ts';
import { REDACTED, SecretMatcher } from './secret-matcher.ts';

export type { Logger };

/** pino's asynchronous destination (sonic-boom, which pino depends on). */
type SonicBoom = ReturnType<typeof pino.destination>;

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

/** Where lines go: stdout through one buffered writer per process, or a stream a test hands in. */
export interface LogDestination {
  write(line: string): unknown;
}

export interface CreateLoggerOptions extends LoggerOptions {
  /** Default: the process's buffered stdout (processStdout()). */
  destination?: LogDestination;
  /** Render `text` even when the destination is not a terminal (default: only stdout on a TTY gets text). */
  textOnPipes?: boolean;
  /** Per-module levels (log-filter.ts); `level` stays the process's level. */
  filter?: LogFilter;
}

/**
 * The module levels of a logger made by createLogger, on the root and so (pino children are
 * made with Object.create) visible from every child.
 */
const MODULE_LEVELS = Symbol('switchboard.moduleLevels');
type WithModuleLevels = Logger & { [MODULE_LEVELS]?: ReadonlyMap<LogModule, LevelWithSilent> };

/**
 * The logger a module logs with: a child bound to `{module}` at the level the filter gives that
 * module (lower or higher than the process's), or `logger` itself when the filter names no level
 * for it. Call once where the module is set up, not per request.
 */
export function moduleLogger(logger: Logger, module: LogModule): Logger {
  const level = (logger as WithModuleLevels)[MODULE_LEVELS]?.get(module);
  return level === undefined ? logger : logger.child({ module }, { level });
}

function withModuleLevels(logger: Logger, filter: LogFilter | undefined): Logger {
  if (filter && filter.modules.size > 0) (logger as WithModuleLevels)[MODULE_LEVELS] = filter.modules;
  return logger;
}

/**
 * Bytes held before a write to stdout. A synchronous write per line (process.stdout on a file or
 * pipe) was most of the ~29 µs an access log line cost; one write per 8 KiB (or per flush tick)
 * makes a line a string append. Bounded: sonic-boom writes once this much is held (its maxWrite is 16 KiB).
 */
const STDOUT_BUFFER_BYTES = 8 * 1024;
/** A quiet process still shows its lines within this time. */
const STDOUT_FLUSH_INTERVAL_MS = 100;

let stdoutBoom: SonicBoom | undefined;

/**
 * The process's one buffered stdout writer (sonic-boom, asynchronous). Flushed every 100 ms, and
 * synchronously when the process exits (normal exit, process.exit after SIGTERM's drain): no line
 * written before exit is lost.
 */
export function processStdout(): SonicBoom {
  if (stdoutBoom) return stdoutBoom;
  const boom = pino.destination({ fd: 1, minLength: STDOUT_BUFFER_BYTES, sync: false });
  stdoutBoom = boom;
  const timer = setInterval(() => flushQuietly(boom), STDOUT_FLUSH_INTERVAL_MS);
  timer.unref();
  process.once('exit', () => {
    clearInterval(timer);
    flushLogs();
  });
  return boom;
}

/** Writes every buffered line now (synchronously); call before an abrupt exit. */
export function flushLogs(): void {
  const boom = stdoutBoom;
  if (!boom) return;
  try {
    boom.flushSync();
  } catch {
    // EAGAIN on a full pipe or a closed stdout: nothing better to do at exit.
  }
}

function flushQuietly(boom: SonicBoom): void {
  // flush() waits for a write in flight; it throws on a closed stream (at exit): nothing to do then.
  try {
    boom.flush();
  } catch {
    /* closed */
  }
}

/**
 * One logger for the whole process. Lines are pino's JSON, built by pino without string formatting
 * of their own, scrubbed of secret values (scrubLogLine) and appended to a buffered stdout. `text`
 * reshapes a line into a readable one for a person at a terminal; when stdout is a file or pipe
 * (a collector, a container runtime) lines stay JSON, which costs no parse and re-render per line
 * — the `textOnPipes` option keeps text there. Credential headers are redacted by path.
 */
export function createLogger(opts: CreateLoggerOptions = {}): Logger {
  const level = (opts.level ?? 'info') as LevelWithSilent;
  const redact = { paths: REDACT_PATHS, censor: REDACTED };
  const destination = opts.destination ?? processStdout();
  const terminal = opts.destination === undefined && process.stdout.isTTY === true;
  const text = opts.format !== 'json' && (terminal || opts.textOnPipes === true);
  if (!text) {
    return withModuleLevels(pino({ level, base: { pid: process.pid }, redact, hooks: { streamWrite: scrubLogLine } }, destination), opts.filter);
  }
  return withModuleLevels(pino({ level, base: undefined, timestamp: false, redact, hooks: { streamWrite: (line) => toText(scrubLogLine(line)) } }, destination), opts.filter);
}

/** A JSON line as `time LEVEL msg key=value …` for a person reading a terminal. */
function toText(line: string): string {
  const rec = JSON.parse(line) as Record<string, unknown>;
  const { level, msg, ...rest } = rec;
  const name = typeof level === 'number' ? (pino.levels.labels[level] ?? String(level)) : String(level);
  const extras = Object.entries(rest).map(([k, v]) => `${k}=${typeof v === 'string' ? v : JSON.stringify(v)}`).join(' ');
  return `${new Date().toISOString()} ${name.toUpperCase().padEnd(5)} ${msg ?? ''}${extras ? ' ' + extras : ''}\n`;
}

/** A silent logger for tests. */
export const silentLogger: Logger = pino({ level: 'silent' });
