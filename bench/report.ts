/** Turns the measurements of one interleaved run into markdown tables (pasteable into RESULTS.md). */

export interface Sample {
  requestsPerSecond: number;
  /** Proxy CPU per request in µs; undefined for the direct call, which has no proxy. */
  cpuMicrosPerRequest?: number;
  /** At one connection. */
  p50Ms: number;
  p99Ms: number;
  errors: number;
}

export interface TargetSummary {
  name: string;
  requestsPerSecond: number;
  cpuMicrosPerRequest?: number;
  p50Ms: number;
  p99Ms: number;
  errors: number;
}

export function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
}

export function summarize(name: string, samples: readonly Sample[]): TargetSummary {
  const cpu = samples.map((s) => s.cpuMicrosPerRequest).filter((v): v is number => v !== undefined);
  return {
    name,
    requestsPerSecond: median(samples.map((s) => s.requestsPerSecond)),
    ...(cpu.length > 0 ? { cpuMicrosPerRequest: median(cpu) } : {}),
    p50Ms: median(samples.map((s) => s.p50Ms)),
    p99Ms: median(samples.map((s) => s.p99Ms)),
    errors: samples.reduce((sum, s) => sum + s.errors, 0),
  };
}

/** `rows[0]` must be the direct call and `rows[1]` nginx: everything else is compared to them. */
export function markdownReport(rows: readonly TargetSummary[], connections: number): string {
  const [direct, nginx] = rows;
  const added = (row: TargetSummary, key: 'p50Ms' | 'p99Ms'): number => row[key] - direct[key];
  const lines = [
    `| target | req/s (c=${connections}) | proxy CPU-µs/req | p50 c=1 (ms) | p99 c=1 (ms) | added p50 (ms) | added p99 (ms) | errors |`,
    '|---|---:|---:|---:|---:|---:|---:|---:|',
    ...rows.map((r) => `| ${r.name} | ${fmt(r.requestsPerSecond, 0)} | ${r.cpuMicrosPerRequest === undefined ? '—' : fmt(r.cpuMicrosPerRequest, 1)} | ${fmt(r.p50Ms, 3)} | ${fmt(r.p99Ms, 3)} | ${r === direct ? '—' : fmt(added(r, 'p50Ms'), 3)} | ${r === direct ? '—' : fmt(added(r, 'p99Ms'), 3)} | ${r.errors} |`),
    '',
    '| target | req/s vs direct | req/s vs nginx | CPU-µs/req vs nginx | added p50 vs nginx | added p99 vs nginx |',
    '|---|---:|---:|---:|---:|---:|',
    ...rows.slice(1).map((r) => `| ${r.name} | ${ratio(r.requestsPerSecond, direct.requestsPerSecond)} | ${ratio(r.requestsPerSecond, nginx.requestsPerSecond)} | ${ratio(r.cpuMicrosPerRequest, nginx.cpuMicrosPerRequest)} | ${ratio(added(r, 'p50Ms'), added(nginx, 'p50Ms'))} | ${ratio(added(r, 'p99Ms'), added(nginx, 'p99Ms'))} |`),
  ];
  return lines.join('\n');
}

function fmt(value: number, digits: number): string {
  return value.toFixed(digits);
}

function ratio(value: number | undefined, reference: number | undefined): string {
  if (value === undefined || reference === undefined || reference <= 0) return '—';
  return `${(value / reference).toFixed(2)}×`;
}
