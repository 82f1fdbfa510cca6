/** Runs `wrk` (Debian package) against one URL and parses its summary. */
import { execFile, type ChildProcess } from 'node:child_process';
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
  /** `Name: value` request headers, each passed as `-H`. */
  headers?: readonly string[];
}

export async function runWrk(url: string, opts: LoadOptions): Promise<LoadResult> {
  const args = [`-t${opts.threads ?? 1}`, `-c${opts.connections}`, `-d${opts.durationS}s`, '--latency', ...(opts.headers ?? []).flatMap((h) => ['-H', h]), url];
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

/** Polls until `url` answers 200 with `headers`; fails early, with the log's tail, when the gateway exits. */
export async function waitFor200(url: string, opts: { headers?: readonly string[]; child: ChildProcess; logTail: () => string; timeoutMs: number }): Promise<void> {
  const deadline = Date.now() + opts.timeoutMs;
  const headers = Object.fromEntries((opts.headers ?? []).map((h) => h.split(': ') as [string, string]));
  let last = 'no answer';
  while (Date.now() < deadline) {
    if (opts.child.exitCode !== null || opts.child.signalCode !== null) throw new Error(`gateway exited before ${url} was served:\n${opts.logTail()}`);
    try {
      const res = await fetch(url, { headers });
      await res.arrayBuffer();
      if (res.status === 200) return;
      last = `status ${res.status}`;
    } catch (err) {
      last = String(err);
    }
    await new Promise((ok) => setTimeout(ok, 100));
  }
  throw new Error(`${url} did not answer 200 within ${opts.timeoutMs} ms (${last}):\n${opts.logTail()}`);
}
