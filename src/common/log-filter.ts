/**
 * A log filter in the standard (env_logger-style) syntax ProxyParameters `logging.level` uses:
 * comma-separated entries, each a level (`warn`: the process level) or `module=level`
 * (`mcp=debug`: that module's level, lower or higher than the process's). Later entries win.
 *
 * The modules are the proxy's parts that log under their own name (LOG_MODULES); an unknown
 * module or level is an error naming the entry, so a typo does not silently log nothing.
 * Parsed once at start (the controller checks the same at provisioning), never per log line.
 */
import type { LevelWithSilent } from 'pino';

export const LOG_MODULES = {
  xds: 'the connection to the controller (config stream, reconnects, NACKs)',
  mcp: 'MCP backends (sessions, upstream servers, guardrails)',
  llm: 'ai backends (providers, failover, prompt guards)',
  forward: 'dynamic forward proxy backends (CONNECT tunnels)',
} as const;
export type LogModule = keyof typeof LOG_MODULES;

const LEVELS: readonly string[] = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'];
/** Bounds what is parsed (the filter comes from a ProxyParameters or the environment). */
export const MAX_LOG_FILTER_CHARS = 1024;

export interface LogFilter {
  /** The entry without `module=`, when there is one. */
  readonly level: LevelWithSilent | undefined;
  readonly modules: ReadonlyMap<LogModule, LevelWithSilent>;
}

export class LogFilterError extends Error {}

/** `warn,mcp=debug` → {level: warn, modules: {mcp: debug}}; `off` is `silent`. Throws LogFilterError. */
export function parseLogFilter(filter: string): LogFilter {
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
    if (!Object.hasOwn(LOG_MODULES, module)) throw new LogFilterError(`log filter entry "${entry}": module must be one of ${Object.keys(LOG_MODULES).join(', ')}`);
    modules.set(module as LogModule, parsed as LevelWithSilent);
  }
  return { level, modules };
}
