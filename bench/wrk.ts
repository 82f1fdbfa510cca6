/** Runs `wrk` (Debian package) against one URL and parses its summary. */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';

const run = promisify(execFile);

export interface LoadResult {
  requests: number;
  requestsPerSecond: number;
  p50Ms: number;
  p99Ms: number;
  /** Non-2xx/3xx responses plus socket errors: a benchmark with any is not a valid comparison. */
  errors: number;
}

export interface LoadOptions {
  connections: number;
  durationS: number;
  threads?: number;
}

export async function runWrk(url: string, opts: LoadOptions): Promise<LoadResult> {
  const args = [`-t${opts.threads ?? 1}`, `-c${opts.connections}`, `-d${opts.durationS}s`, '--latency', url];
  const { stdout } = await run('wrk', args, { timeout: (opts.durationS + 30) * 1000 });
  return parseWrk(stdout);
}

export function parseWrk(text: string): LoadResult {
  const requests = Number(/(\d+) requests in/.exec(text)?.[1]);
  const requestsPerSecond = Number(/Requests\/sec:\s+([\d.]+)/.exec(text)?.[1]);
  const p50Ms = latencyMs(/^\s+50%\s+([\d.]+)(us|ms|s)\s*$/m.exec(text));
  const p99Ms = latencyMs(/^\s+99%\s+([\d.]+)(us|ms|s)\s*$/m.exec(text));
  const non2xx = Number(/Non-2xx or 3xx responses:\s+(\d+)/.exec(text)?.[1] ?? 0);
  const socket = /Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)/.exec(text);
  const socketErrors = socket ? socket.slice(1).reduce((sum, n) => sum + Number(n), 0) : 0;
  if (!Number.isFinite(requests) || !Number.isFinite(requestsPerSecond) || !Number.isFinite(p50Ms) || !Number.isFinite(p99Ms)) {
    throw new Error(`could not parse wrk output:\n${text}`);
  }
  return { requests, requestsPerSecond, p50Ms, p99Ms, errors: non2xx + socketErrors };
}

function latencyMs(match: RegExpExecArray | null): number {
  if (!match) return Number.NaN;
  const value = Number(match[1]);
  return match[2] === 'us' ? value / 1000 : match[2] === 's' ? value * 1000 : value;
}
