import os from 'node:os';
import { parseArgs, type ParseArgsOptionsConfig } from 'node:util';
import { LogFilterError, parseLogFilter, RUN_LOG_MODULES, type LogFilter, type LogModules } from '../common/log-filter.ts';
import { parseListenAddress, type ListenAddress } from '../embedded/address.ts';

/** A mistake on the command line: printed with the command's usage hint, exit code 2. */
export class UsageError extends Error {
  readonly command: string;
  constructor(command: string, message: string) {
    super(message);
    this.command = command;
  }
}

export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];
export type LogFormat = 'json' | 'text';

export interface RunOptions {
  readonly files: readonly string[];
  readonly adminAddress: ListenAddress;
  readonly metricsAddress: ListenAddress;
  readonly logLevel: LogLevel;
  /** Per-module levels (`--log-filter` / SWITCHBOARD_LOG_FILTER; modules RUN_LOG_MODULES). */
  readonly logFilter: LogFilter | undefined;
  /** The filter as written, for the cluster workers (they parse it again). */
  readonly logFilterText: string | undefined;
  readonly logFormat: LogFormat;
  readonly workers: number;
  /** The cluster watchdog's stall timeout in ms (0: off); only used with more than one worker. */
  readonly workerStallTimeoutMs: number;
  /** The experimental ProxyModel API (docs/models.md); off, ProxyModels are ignored with a status saying so. */
  readonly proxyModels: boolean;
}

export interface ValidateOptions {
  readonly files: readonly string[];
  /** ProxyModel is experimental: validated only when enabled, otherwise reported as ignored. */
  readonly proxyModels: boolean;
  /** Print each switchboard.dev object with SPEC.md's defaults filled in. */
  readonly showDefaults: boolean;
}

export const DEFAULT_ADMIN_ADDRESS = '127.0.0.1:15000';
export const DEFAULT_METRICS_ADDRESS = '0.0.0.0:15020';

const HELP = { help: { type: 'boolean', short: 'h' } } as const satisfies ParseArgsOptionsConfig;
const FILES = { file: { type: 'string', short: 'f', multiple: true } } as const satisfies ParseArgsOptionsConfig;

const PROXY_MODELS = { 'enable-proxy-models': { type: 'boolean', default: false } } as const satisfies ParseArgsOptionsConfig;

const RUN_OPTIONS = {
  ...HELP,
  ...FILES,
  'admin-address': { type: 'string', default: DEFAULT_ADMIN_ADDRESS },
  'metrics-address': { type: 'string', default: DEFAULT_METRICS_ADDRESS },
  'log-level': { type: 'string' },
  'log-filter': { type: 'string' },
  'log-format': { type: 'string', default: 'text' },
  workers: { type: 'string' },
  'worker-stall-timeout': { type: 'string', default: '10' },
  ...PROXY_MODELS,
} as const satisfies ParseArgsOptionsConfig;
const VALIDATE_OPTIONS = { ...HELP, ...FILES, ...PROXY_MODELS, 'show-defaults': { type: 'boolean', default: false } } as const satisfies ParseArgsOptionsConfig;

/** `switchboard run …`; flags win over the environment (`env` is process.env, injected for tests). Returns 'help' for `--help`. */
export function parseRunArgs(argv: readonly string[], env: NodeJS.ProcessEnv = process.env): RunOptions | 'help' {
  const { values } = parseStrict('run', argv, RUN_OPTIONS);
  if (values.help) return 'help';
  const { logLevel, logFilter, logFilterText } = logLevels('run', values['log-level'], values['log-filter'], env, RUN_LOG_MODULES);
  const logFormat = values['log-format'];
  if (logFormat !== 'json' && logFormat !== 'text') throw new UsageError('run', `--log-format must be json or text, got "${logFormat}"`);
  return {
    files: requireFiles('run', values.file),
    adminAddress: address('run', values['admin-address'], '--admin-address'),
    metricsAddress: address('run', values['metrics-address'], '--metrics-address'),
    logLevel,
    logFilter,
    logFilterText,
    logFormat,
    workers: values.workers === undefined ? os.availableParallelism() : workerCount(values.workers),
    workerStallTimeoutMs: stallTimeoutMs(values['worker-stall-timeout']),
    proxyModels: values['enable-proxy-models'],
  };
}

/** `switchboard validate …`; returns 'help' for `--help`. */
export function parseValidateArgs(argv: readonly string[]): ValidateOptions | 'help' {
  const { values } = parseStrict('validate', argv, VALIDATE_OPTIONS);
  if (values.help) return 'help';
  return { files: requireFiles('validate', values.file), proxyModels: values['enable-proxy-models'], showDefaults: values['show-defaults'] };
}

/** `switchboard version`: takes nothing but `--help`. */
export function parseVersionArgs(argv: readonly string[]): 'help' | 'version' {
  return parseStrict('version', argv, HELP).values.help ? 'help' : 'version';
}

/** `switchboard crds`: takes nothing but `--help`. */
export function parseCrdsArgs(argv: readonly string[]): 'help' | 'crds' {
  return parseStrict('crds', argv, HELP).values.help ? 'help' : 'crds';
}

/**
 * `--log-level` and `--log-filter` (or SWITCHBOARD_LOG_FILTER) of `command`, whose modules are
 * `known`: the level is `--log-level`, else the filter's own level entry, else info.
 */
export function logLevels(command: string, levelFlag: string | undefined, filterFlag: string | undefined, env: NodeJS.ProcessEnv, known: LogModules): { logLevel: LogLevel; logFilter: LogFilter | undefined; logFilterText: string | undefined } {
  const text = filterFlag ?? env.SWITCHBOARD_LOG_FILTER;
  const logFilterText = text !== undefined && text.trim() !== '' ? text : undefined;
  let logFilter: LogFilter | undefined;
  try {
    logFilter = logFilterText === undefined ? undefined : parseLogFilter(logFilterText, known);
  } catch (err) {
    if (err instanceof LogFilterError) throw new UsageError(command, `--log-filter: ${err.message}`);
    throw err;
  }
  const logLevel = levelFlag ?? logFilter?.level ?? 'info';
  if (!(LOG_LEVELS as readonly string[]).includes(logLevel)) throw new UsageError(command, `--log-level must be one of ${LOG_LEVELS.join(', ')}, got "${logLevel}"`);
  return { logLevel: logLevel as LogLevel, logFilter, logFilterText };
}

function parseStrict<T extends ParseArgsOptionsConfig>(command: string, argv: readonly string[], options: T) {
  try {
    return parseArgs({ args: [...argv], options, strict: true, allowPositionals: false });
  } catch (err) {
    throw new UsageError(command, rephrase(err as Error & { code?: string }));
  }
}

/** node:util's messages are written for script authors; say it the way a CLI user expects. */
function rephrase(err: Error & { code?: string }): string {
  const unknown = /Unknown option '([^']+)'/.exec(err.message);
  if (err.code === 'ERR_PARSE_ARGS_UNKNOWN_OPTION' && unknown) return `unknown flag ${unknown[1]}`;
  const positional = /Unexpected argument '([^']+)'/.exec(err.message);
  if (err.code === 'ERR_PARSE_ARGS_UNEXPECTED_POSITIONAL' && positional) return `unexpected argument "${positional[1]}" (files are passed with -f PATH)`;
  const missing = /^Option '(.+?)(?: <value>)?' argument missing$/.exec(err.message);
  if (err.code === 'ERR_PARSE_ARGS_INVALID_OPTION_VALUE' && missing) return `${missing[1]} needs a value`;
  return err.message;
}

function requireFiles(command: string, files: string[] | undefined): string[] {
  if (!files || files.length === 0) throw new UsageError(command, 'at least one -f PATH (a YAML file or a folder) is required');
  return files;
}

function address(command: string, text: string, flag: string): ListenAddress {
  try {
    return parseListenAddress(text, flag);
  } catch (err) {
    throw new UsageError(command, (err as Error).message);
  }
}

function stallTimeoutMs(text: string): number {
  const seconds = Number(text);
  if (!/^\d+(\.\d+)?$/.test(text) || seconds > 3600) throw new UsageError('run', `--worker-stall-timeout must be a number of seconds from 0 (off) to 3600, got "${text}"`);
  return Math.round(seconds * 1000);
}

function workerCount(text: string): number {
  const n = Number(text);
  if (!/^\d+$/.test(text) || n < 1 || n > 1024) throw new UsageError('run', `--workers must be a whole number from 1 to 1024, got "${text}"`);
  return n;
}
