/**
 * A log filter in the standard (env_logger-style) syntax ProxyParameters `logging.level` uses:
 * comma-separated entries, each a level (`warn`: the process level) or `module=level`
 * (`mcp=debug`: that module's level, lower or higher than the process's). Later entries win.
 *
 * The modules are a process's parts that log under their own name: the proxy's (LOG_MODULES,
 * what ProxyParameters name), `switchboard run`'s (RUN_LOG_MODULES) and `switchboard
 * controller`'s (CONTROLLER_LOG_MODULES). An unknown module or level is an error naming the entry,
 * so a typo does not silently log nothing. Parsed once at start (the controller checks the
 * proxy's at provisioning), never per log line.
 */
import type { LevelWithSilent } from 'pino';

/** The proxy's (`switchboard proxy`; ProxyParameters `logging.level` names these). */
export const LOG_MODULES = {
  xds: 'the connection to the controller (config stream, reconnects, NACKs)',
  mcp: 'MCP backends (sessions, upstream servers, guardrails)',
  llm: 'ai backends (providers, failover, prompt guards)',
  forward: 'dynamic forward proxy backends (CONNECT tunnels)',
} as const;

/** `switchboard run`: the embedded gateway's own backend handlers and its file source. */
export const RUN_LOG_MODULES = {
  source: 'the file source (reading and parsing the files, reloads)',
  mcp: LOG_MODULES.mcp,
  llm: LOG_MODULES.llm,
  forward: LOG_MODULES.forward,
} as const;

/** `switchboard controller`: its parts that talk to the API server and to the proxies. */
export const CONTROLLER_LOG_MODULES = {
  kube: 'the Kubernetes watches (lists, watch restarts, the object limit)',
  status: 'status written back to the API server',
  provision: 'proxy workloads and session-key Secrets made for Gateways',
  leader: 'leader election (the Lease)',
  xds: 'the config server the proxies connect to (streams, token reviews, refusals)',
} as const;

export type LogModule = keyof typeof LOG_MODULES | keyof typeof RUN_LOG_MODULES | keyof typeof CONTROLLER_LOG_MODULES;

/** The module names of one process, in the order help and errors list them. */
export type LogModules = Readonly<Partial<Record<LogModule, string>>>;

const LEVELS: readonly string[] = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'];
/** Bounds what is parsed (the filter comes from a ProxyParameters or the environment). */
export const MAX_LOG_FILTER_CHARS = 1024;

export interface LogFilter {
  /** The entry without `module=`, when there is one. */
  readonly level: LevelWithSilent | undefined;
  readonly modules: ReadonlyMap<LogModule, LevelWithSilent>;
}

export class LogFilterError extends Error {}

/**
 * `warn,mcp=debug` → {level: warn, modules: {mcp: debug}}; `off` is `silent`. `known` are the
 * modules of the process the filter is for (default the proxy's). Throws LogFilterError.
 */
export function parseLogFilter(filter: string, known: LogModules = LOG_MODULES): LogFilter {
  if (filter.length > MAX_LOG_FILTER_CHARS) throw new LogFilterError(`log filter is longer than ${MAX_LOG_FILTER_CHARS} characters`);
  let level: LevelWithSilent | undefined;
  const modules = new Map<LogModule, LevelWithSilent>();
  for (const raw of filter.split(',')) {
    const entry = raw.trim();
    if (entry === '') continue;
    const eq = entry.indexOf('=');
    const levelText = (eq < 0 ? entry : entry.slice(eq + 1)).trim().toLowerCase();
    const parsed = levelText === 'off' ? 'silent' : levelText;
    if (!LEVELS.includes(parsed)) throw new LogFilterError(`log filter entry "${entry}": level must be one of ${LEVELS.join(', ')} or off`);
    if (eq < 0) {
      level = parsed as LevelWithSilent;
      continue;
    }
    const module = entry.slice(0, eq).trim();
    if (!Object.hasOwn(known, module)) throw new LogFilterError(`log filter entry "${entry}": module must be one of ${Object.keys(known).join(', ')}`);
    modules.set(module as LogModule, parsed as LevelWithSilent);
  }
  return { level, modules };
}
