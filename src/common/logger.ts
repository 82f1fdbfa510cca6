import { pino, type Logger, type LevelWithSilent } from 'pino';
import type { LogFilter, LogModule } from './log-filter.ts';
import { REDACTED, SecretMatcher } from './secret-matcher.ts';

export type { Logger };

/** pino's file-descriptor destination (sonic-boom, which pino depends on). */
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
 * Bytes held before a write to stdout: PIPE_BUF, so a batch written to a pipe is written whole —
 * the processes of `--workers N` share one stdout, and their batches never interleave mid-line.
 * A synchronous write per line (process.stdout on a file or pipe) was most of the ~29 µs an access
 * log line cost; one write per 4 KiB (or per flush tick) makes a line an array push. Lines are
 * batched here rather than in sonic-boom: its write() takes the byte length of its whole pending
 * string on every line, which re-copies the growing buffer (~2 µs a line at 8 KiB).
 */
const STDOUT_BATCH_BYTES = 4096;
/** A quiet process still shows its lines within this time. */
const STDOUT_FLUSH_INTERVAL_MS = 100;

/**
 * The process's stdout: lines batched in memory and written synchronously, one write per batch
 * (sonic-boom, which pino depends on, does the write: partial writes, EAGAIN on a non-blocking
 * pipe). Synchronous like Node's own stdout on files and pipes: a log reader that stops reading
 * slows the process instead of growing a buffer without bound, and nothing is in flight when the
 * process exits — the exit handler writes the last batch, so no line logged before exit is lost.
 */
class BatchedStdout implements LogDestination {
  readonly #boom: SonicBoom;
  #lines: string[] = [];
  #bytes = 0;

  constructor(boom: SonicBoom) {
    this.#boom = boom;
  }

  write(line: string): boolean {
    const bytes = Buffer.byteLength(line);
    if (this.#bytes + bytes > STDOUT_BATCH_BYTES) this.flush();
    this.#lines.push(line);
    this.#bytes += bytes;
    return true;
  }

  /** Writes every held line now. */
  flush(): void {
    if (this.#lines.length === 0) return;
    const batch = this.#lines.length === 1 ? (this.#lines[0] as string) : this.#lines.join('');
    this.#lines = [];
    this.#bytes = 0;
    this.#boom.write(batch);
  }
}

let stdout: BatchedStdout | undefined;
let stdoutErrorReported = false;

/** The process's one batched stdout writer, flushed every 100 ms and when the process exits. */
export function processStdout(): LogDestination {
  if (stdout) return stdout;
  const boom = pino.destination({ fd: 1, minLength: 0, sync: true });
  // A closed stdout (EPIPE: the reader went away) loses log lines, not the traffic being served.
  boom.on('error', (err: Error) => {
    if (!stdoutErrorReported) process.stderr.write(`switchboard: log lines dropped, stdout failed: ${err.message}\n`);
    stdoutErrorReported = true;
  });
  const batched = new BatchedStdout(boom);
  stdout = batched;
  const timer = setInterval(() => flushQuietly(batched), STDOUT_FLUSH_INTERVAL_MS);
  timer.unref();
  process.once('exit', () => {
    clearInterval(timer);
    flushLogs();
  });
  return batched;
}

/** Writes every held line now; call before an abrupt exit. */
export function flushLogs(): void {
  if (stdout) flushQuietly(stdout);
}

function flushQuietly(batched: BatchedStdout): void {
  try {
    batched.flush();
  } catch {
    // A closed stdout (EPIPE) or one that stays full: nothing better to do with a log line.
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
    const logger = pino({ level, base: { pid: process.pid }, redact, hooks: { streamWrite: scrubLogLine } }, destination);
    (logger as PinoInternals)[TAKES_JSON_LINES] = true;
    return withModuleLevels(logger, opts.filter);
  }
  return withModuleLevels(pino({ level, base: undefined, timestamp: false, redact, hooks: { streamWrite: (line) => toText(scrubLogLine(line)) } }, destination), opts.filter);
}

/**
 * Loggers createLogger made for JSON lines carry this mark (children inherit it): only they take
 * pre-serialized lines (writeInfoLine). A text logger, or a pino made elsewhere, does not.
 */
const TAKES_JSON_LINES = Symbol('switchboard.takesJsonLines');

/** pino's own line parts, under the symbols pino exports for this (typed there as plain symbols). */
const { lsCacheSym, timeSym, chindingsSym, streamSym, endSym } = pino.symbols;
type PinoInternals = Logger & Record<symbol, unknown>;

const INFO = pino.levels.values.info;

/**
 * Writes one info line whose fields the caller already serialized as JSON members (`"a":1,"b":"x"`,
 * no braces) with `msg`, in exactly the shape pino writes (level, time, the logger's bindings, the
 * fields, msg), scrubbed of secret values like every line. For a fixed record on the hot path (the
 * access log) this skips pino's per-key serialisation. Returns false — and writes nothing — when
 * the logger is not a JSON logger from createLogger or info is off for it: the caller logs through
 * pino then (text rendering, a test's logger). `msg` must be a plain ASCII word (it is not escaped).
 */
export function writeInfoLine(logger: Logger, members: string, msg: string): boolean {
  const internals = logger as PinoInternals;
  if (internals[TAKES_JSON_LINES] !== true || !logger.isLevelEnabled('info')) return false;
  const levelPart = (internals[lsCacheSym] as Record<number, string>)[INFO] as string;
  const timePart = (internals[timeSym] as () => string)();
  const line = levelPart + timePart + (internals[chindingsSym] as string) + ',' + members + ',"msg":"' + msg + '"' + (internals[endSym] as string);
  (internals[streamSym] as LogDestination).write(scrubLogLine(line));
  return true;
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
