/**
 * Cuts the gateway's CPU profiles (one per thread) into the edits of a control-plane run, so the
 * first edit after start-up can be compared with a later one, function by function.
 *
 *   node bench/control-plane.ts --only embedded --edits 6 --cpu-prof DIR   # DIR/*.cpuprofile + DIR/edits.json
 *   node bench/profile-edits.ts DIR [EDIT_A [EDIT_B]]                      # default: the first and the last edit
 *
 * Each window runs from the file write to the first 200 of the edited path, on CLOCK_MONOTONIC —
 * the clock V8 stamps profile samples with, in every process. Per thread: CPU-ms in each edit's
 * window, then the top functions (self time) of edit A and edit B and what A spent inclusive.
 * Profiler overhead inflates the numbers: compare edits of one run with each other.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

interface ProfileNode { id: number; callFrame: { functionName: string; url: string; lineNumber: number }; children?: number[] }
interface Profile { nodes: ProfileNode[]; startTime: number; samples: number[]; timeDeltas: number[] }
interface EditWindow { edit: number; startUs: number; endUs: number }

const [dir, editA, editB] = process.argv.slice(2);
if (!dir) throw new Error('usage: node bench/profile-edits.ts DIR [EDIT_A [EDIT_B]]');
const windows = JSON.parse(readFileSync(join(dir, 'edits.json'), 'utf8')) as EditWindow[];
if (windows.length === 0) throw new Error(`no edits in ${join(dir, 'edits.json')}`);
const a = Number(editA ?? 0);
const b = Number(editB ?? windows.length - 1);
const TOP = 14;

const label = (node: ProfileNode): string => {
  const url = node.callFrame.url.replace(/^.*\/node_modules\//, 'nm/').replace(/^file:\/\/.*?\/(src|bench|test)\//, '$1/');
  return `${node.callFrame.functionName || '(anonymous)'} ${url}:${node.callFrame.lineNumber + 1}`;
};
const ms = (us: number): string => (us / 1000).toFixed(1);

for (const file of readdirSync(dir).filter((f) => f.endsWith('.cpuprofile')).sort()) {
  const profile = JSON.parse(readFileSync(join(dir, file), 'utf8')) as Profile;
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const parentOf = new Map<number, number>();
  for (const node of profile.nodes) for (const child of node.children ?? []) parentOf.set(child, node.id);
  const total = windows.map(() => 0);
  const self = windows.map(() => new Map<string, number>());
  const inclusive = windows.map(() => new Map<string, number>());
  let at = profile.startTime;
  for (let i = 0; i < profile.samples.length; i++) {
    at += profile.timeDeltas[i] ?? 0;
    // A sample stands for the time until the next one.
    const spent = profile.timeDeltas[i + 1] ?? 0;
    const w = windows.findIndex((window) => at >= window.startUs && at <= window.endUs);
    const node = byId.get(profile.samples[i] as number);
    if (w < 0 || !node || node.callFrame.functionName === '(idle)') continue;
    total[w] = (total[w] ?? 0) + spent;
    const own = label(node);
    self[w]?.set(own, (self[w]?.get(own) ?? 0) + spent);
    const seen = new Set<string>();
    for (let id: number | undefined = node.id; id !== undefined; id = parentOf.get(id)) {
      const name = label(byId.get(id) as ProfileNode);
      if (seen.has(name)) continue; // recursion counts once
      seen.add(name);
      inclusive[w]?.set(name, (inclusive[w]?.get(name) ?? 0) + spent);
    }
  }
  console.log(`== ${file}: CPU-ms in each edit's window: ${total.map(ms).join(' ')}`);
  const top = (table: Map<string, number> | undefined): string[] => [...(table ?? [])].sort((x, y) => y[1] - x[1]).slice(0, TOP).map(([name, us]) => `   ${ms(us).padStart(6)} ${name}`);
  console.log(` -- edit ${a}, self:`, '\n' + top(self[a]).join('\n'));
  console.log(` -- edit ${a}, inclusive:`, '\n' + top(inclusive[a]).join('\n'));
  console.log(` -- edit ${b}, self:`, '\n' + top(self[b]).join('\n'));
}
