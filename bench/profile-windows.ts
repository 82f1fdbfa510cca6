/**
 * Cuts a whole-run CPU profile of the gateway into the bench's load windows, so a phase measured
 * interleaved with the others can be compared with itself measured alone, function by function.
 *
 *   node bench/llm.ts --cpu-prof DIR [--rounds N]        # leaves DIR/*.cpuprofile and DIR/windows.json
 *   node bench/profile-windows.ts DIR                     # per window: sampled CPU-µs/req, GC share
 *   node bench/profile-windows.ts DIR PHASE_A PHASE_B     # per function: µs/req in A, in B, B − A
 *
 * Samples are attributed by timestamp; "CPU" is every sample that is not (idle). Profiler
 * overhead inflates absolute numbers; compare phases of one profile with each other.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

interface ProfileNode { id: number; callFrame: { functionName: string; url: string; lineNumber: number }; children?: number[] }
interface Profile { nodes: ProfileNode[]; startTime: number; samples: number[]; timeDeltas: number[] }
interface Window { phase: string; startUs: number; endUs: number; requests: number }

const [dir, phaseA, phaseB] = process.argv.slice(2);
if (!dir) throw new Error('usage: node bench/profile-windows.ts DIR [PHASE_A PHASE_B]');
const profileFile = readdirSync(dir).find((f) => f.endsWith('.cpuprofile'));
if (!profileFile) throw new Error(`no .cpuprofile in ${dir}`);
const profile = JSON.parse(readFileSync(join(dir, profileFile), 'utf8')) as Profile;
const windows = JSON.parse(readFileSync(join(dir, 'windows.json'), 'utf8')) as Window[];
const byId = new Map(profile.nodes.map((n) => [n.id, n]));

function label(node: ProfileNode): string {
  const url = node.callFrame.url.replace(/^.*\/node_modules\//, 'nm/').replace(/^file:\/\/.*?\/(src|bench|test)\//, '$1/');
  return `${node.callFrame.functionName || '(anonymous)'} ${url}:${node.callFrame.lineNumber + 1}`;
}

/** Self time per function label in one window, in µs. */
function selfTimes(w: Window): Map<string, number> {
  const out = new Map<string, number>();
  let t = profile.startTime;
  for (let i = 0; i < profile.samples.length; i++) {
    t += profile.timeDeltas[i] ?? 0;
    if (t < w.startUs || t > w.endUs) continue;
    const node = byId.get(profile.samples[i]);
    if (!node) continue;
    const key = label(node);
    out.set(key, (out.get(key) ?? 0) + (profile.timeDeltas[i + 1] ?? 0));
  }
  return out;
}

const cpuOf = (m: Map<string, number>) => [...m].reduce((sum, [k, v]) => (k.startsWith('(idle)') ? sum : sum + v), 0);
const gcOf = (m: Map<string, number>) => [...m].reduce((sum, [k, v]) => (k.startsWith('(garbage collector)') ? sum + v : sum), 0);

if (!phaseA) {
  console.log('| # | phase | requests | sampled CPU-µs/req | GC µs/req |');
  console.log('|---:|---|---:|---:|---:|');
  windows.forEach((w, i) => {
    const m = selfTimes(w);
    console.log(`| ${i} | ${w.phase} | ${w.requests} | ${(cpuOf(m) / w.requests).toFixed(1)} | ${(gcOf(m) / w.requests).toFixed(1)} |`);
  });
} else {
  const perRequest = (phase: string) => {
    const sum = new Map<string, number>();
    let requests = 0;
    for (const w of windows.filter((x) => x.phase === phase)) {
      requests += w.requests;
      for (const [k, v] of selfTimes(w)) sum.set(k, (sum.get(k) ?? 0) + v);
    }
    if (requests === 0) throw new Error(`no window named ${phase}`);
    return new Map([...sum].map(([k, v]) => [k, v / requests]));
  };
  const a = perRequest(phaseA);
  const b = perRequest(phaseB ?? phaseA);
  console.log(`sampled CPU-µs/req: ${phaseA} ${cpuOf(a).toFixed(1)}, ${phaseB} ${cpuOf(b).toFixed(1)}`);
  const rows = [...new Set([...a.keys(), ...b.keys()])].map((k) => ({ k, a: a.get(k) ?? 0, b: b.get(k) ?? 0 }));
  rows.sort((x, y) => Math.abs(y.b - y.a) - Math.abs(x.b - x.a));
  for (const r of rows.slice(0, 60)) console.log(`${(r.b - r.a).toFixed(2).padStart(8)} ${r.a.toFixed(2).padStart(8)} ${r.b.toFixed(2).padStart(8)}  ${r.k}`);
}
