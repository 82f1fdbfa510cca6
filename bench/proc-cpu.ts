/**
 * CPU time of a process and all its descendants, from /proc (Linux only). Sampled before and
 * after a load run, the difference is the CPU the proxy spent serving it, whatever its process
 * model (nginx master + worker, Switchboard primary + cluster workers).
 */
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';

const CLOCK_TICKS_PER_SECOND = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;

interface ProcStat {
  pid: number;
  ppid: number;
  /** utime + stime in clock ticks. */
  ticks: number;
}

function readStat(pid: number): ProcStat | undefined {
  let text: string;
  try {
    text = readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch {
    return undefined; // the process exited between listing and reading
  }
  // The command name (field 2) is parenthesised and may contain spaces: split after the last ')'.
  const fields = text.slice(text.lastIndexOf(')') + 2).split(' ');
  // fields[0] is field 3 (state): ppid is field 4, utime 14, stime 15.
  return { pid, ppid: Number(fields[1]), ticks: Number(fields[11]) + Number(fields[12]) };
}

/** CPU microseconds used so far by `rootPid` and every live descendant. */
export function treeCpuMicros(rootPid: number): number {
  const stats: ProcStat[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const stat = readStat(Number(entry));
    if (stat) stats.push(stat);
  }
  const children = new Map<number, ProcStat[]>();
  for (const s of stats) {
    const list = children.get(s.ppid) ?? [];
    list.push(s);
    children.set(s.ppid, list);
  }
  const root = stats.find((s) => s.pid === rootPid);
  if (!root) throw new Error(`process ${rootPid} is gone`);
  let ticks = 0;
  const queue = [root];
  while (queue.length > 0) {
    const next = queue.pop() as ProcStat;
    ticks += next.ticks;
    queue.push(...(children.get(next.pid) ?? []));
  }
  return (ticks / CLOCK_TICKS_PER_SECOND) * 1e6;
}

/**
 * CPU microseconds used so far by each kind of thread of one process, keyed by thread name
 * (`node` is the main thread; V8's GC and compiler helpers are `V8 DefaultWorke…`; libuv's pool
 * `libuv-worker`): work off the main thread never shows in a CPU profile.
 */
export function threadCpuMicros(pid: number): Map<string, number> {
  const out = new Map<string, number>();
  let tasks: string[];
  try {
    tasks = readdirSync(`/proc/${pid}/task`);
  } catch {
    return out;
  }
  for (const tid of tasks) {
    let text: string;
    try {
      text = readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8');
    } catch {
      continue;
    }
    const name = text.slice(text.indexOf('(') + 1, text.lastIndexOf(')'));
    const fields = text.slice(text.lastIndexOf(')') + 2).split(' ');
    const micros = ((Number(fields[11]) + Number(fields[12])) * 1e6) / CLOCK_TICKS_PER_SECOND;
    out.set(name, (out.get(name) ?? 0) + micros);
  }
  return out;
}

/**
 * CPU time (user + system, ms) of a process's threads: all of them and its main thread (the one
 * that serves requests with `--workers 1`), from /proc (ticks of 10 ms: USER_HZ is 100 on Linux).
 * On a loaded machine the edit latency moves 2–3x between runs; the CPU an edit costs the gateway
 * moves much less (±15 %), so trees compare on it better.
 */
export function threadCpu(pid: number): { all: number; main: number } {
  const ticks = (stat: string): number => {
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return Number(fields[11]) + Number(fields[12]);
  };
  let all = 0;
  let main = 0;
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    try {
      const t = ticks(readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8'));
      all += t;
      if (tid === String(pid)) main = t;
    } catch {
      // The thread ended meanwhile.
    }
  }
  return { all: all * 10, main: main * 10 };
}
