/**
 * A V8 heap snapshot summarised by *holder* (issue 15: what the config thread retains): retained
 * sizes from the dominator tree (weak and shortcut edges ignored, as DevTools does); for each
 * instance of the named holder classes (the translator's memos, the file set, the status writer …)
 * its retained size, the size of everything reachable from it as data (shared objects included),
 * and what each of its fields holds exclusively (dominates), by constructor. Private `#fields`
 * show as edges of that name. (bench/controller-heap-summary.ts prints the dominator tree itself.)
 *
 *   node --max-old-space-size=4096 bench/config-thread-heap-summary.ts FILE.heapsnapshot [--holders A,B,…] [--top 30]
 *
 * Also a module: summariseHolders() for bench/config-thread-heap.ts.
 */
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';

interface RawSnapshot {
  snapshot: { meta: { node_fields: string[]; node_types: [string[], ...unknown[]]; edge_fields: string[]; edge_types: [string[], ...unknown[]] } };
  nodes: number[];
  edges: number[];
  strings: string[];
}

export const DEFAULT_HOLDERS = [
  'IncrementalTranslator', 'FileSet', 'StatusWriter', 'IncrementalDedupe', 'BindSender', 'ScanReporter',
  'RouteMemo', 'ApplyMemo', 'PolicyPassMemo', 'RouteOrderCache', 'IndexCache', 'BindsMemo', 'RouteLoopMemo', 'StatusOrder', 'VersionParts', 'KeptBuckets', 'RecordPointers', 'ScrubbedList', 'YamlFileListing',
];

const MiB = 1024 * 1024;
const mib = (bytes: number): string => `${(bytes / MiB).toFixed(2)} MiB`;

export function summariseHolders(text: string, opts: { holders?: readonly string[]; top?: number } = {}): string {
  const raw = JSON.parse(text) as RawSnapshot;
  const holders = new Set(opts.holders ?? DEFAULT_HOLDERS);
  const top = opts.top ?? 30;
  const meta = raw.snapshot.meta;
  const NF = meta.node_fields.length;
  const EF = meta.edge_fields.length;
  const nType = meta.node_fields.indexOf('type');
  const nName = meta.node_fields.indexOf('name');
  const nSize = meta.node_fields.indexOf('self_size');
  const nEdges = meta.node_fields.indexOf('edge_count');
  const eType = meta.edge_fields.indexOf('type');
  const eName = meta.edge_fields.indexOf('name_or_index');
  const eTo = meta.edge_fields.indexOf('to_node');
  const nodeTypes = meta.node_types[0];
  const edgeTypes = meta.edge_types[0];
  const WEAK = edgeTypes.indexOf('weak');
  const SHORTCUT = edgeTypes.indexOf('shortcut');
  const ELEMENT = edgeTypes.indexOf('element');
  const HIDDEN = edgeTypes.indexOf('hidden');
  const { nodes, edges, strings } = raw;
  const count = nodes.length / NF;
  const firstEdge = new Uint32Array(count + 1);
  for (let i = 0, e = 0; i < count; i++) {
    firstEdge[i] = e;
    e += (nodes[i * NF + nEdges] as number) * EF;
  }
  firstEdge[count] = edges.length;
  // A WeakMap's value shows as held by the table and by its key ("part of key … pair in WeakMap"):
  // the key's edge is left out, so a memo's values count as the memo's (its keys are alive anyway).
  const INTERNAL = edgeTypes.indexOf('internal');
  const ephemeron = new Uint8Array(strings.length);
  strings.forEach((s, i) => { if (s.includes('part of key')) ephemeron[i] = 1; });
  const strong = (e: number): boolean => edges[e + eType] !== WEAK && edges[e + eType] !== SHORTCUT && !(edges[e + eType] === INTERNAL && ephemeron[edges[e + eName] as number] === 1);

  // Postorder by iterative DFS from the root (node 0).
  const order = new Int32Array(count).fill(-1);
  const post: number[] = [];
  const stack: number[] = [0];
  const cursor = new Uint32Array(count);
  const visited = new Uint8Array(count);
  visited[0] = 1;
  while (stack.length > 0) {
    const v = stack[stack.length - 1] as number;
    const end = firstEdge[v + 1] as number;
    let pushed = false;
    for (let e = (firstEdge[v] as number) + (cursor[v] as number) * EF; e < end; e += EF) {
      cursor[v] = (cursor[v] as number) + 1;
      if (!strong(e)) continue;
      const w = (edges[e + eTo] as number) / NF;
      if (visited[w]) continue;
      visited[w] = 1;
      stack.push(w);
      pushed = true;
      break;
    }
    if (!pushed) {
      stack.pop();
      order[v] = post.length;
      post.push(v);
    }
  }
  // Predecessors over strong edges.
  const predStart = new Uint32Array(count + 1);
  for (let v = 0; v < count; v++) {
    if (!visited[v]) continue;
    for (let e = firstEdge[v] as number; e < (firstEdge[v + 1] as number); e += EF) if (strong(e)) predStart[(edges[e + eTo] as number) / NF + 1]++;
  }
  for (let v = 0; v < count; v++) predStart[v + 1] = (predStart[v + 1] as number) + (predStart[v] as number);
  const preds = new Uint32Array(predStart[count] as number);
  const fill = predStart.slice(0, count);
  for (let v = 0; v < count; v++) {
    if (!visited[v]) continue;
    for (let e = firstEdge[v] as number; e < (firstEdge[v + 1] as number); e += EF) {
      if (!strong(e)) continue;
      const w = (edges[e + eTo] as number) / NF;
      preds[fill[w]++] = v;
    }
  }
  // Cooper–Harvey–Kennedy on postorder numbers.
  const n = post.length;
  const idom = new Int32Array(n).fill(-1);
  const root = order[0] as number;
  idom[root] = root;
  const intersect = (a: number, b: number): number => {
    while (a !== b) {
      while (a < b) a = idom[a] as number;
      while (b < a) b = idom[b] as number;
    }
    return a;
  };
  for (let changed = true; changed;) {
    changed = false;
    for (let k = n - 1; k >= 0; k--) {
      if (k === root) continue;
      const v = post[k] as number;
      let best = -1;
      for (let p = predStart[v] as number; p < (predStart[v + 1] as number); p++) {
        const u = order[preds[p] as number] as number;
        if (u < 0 || idom[u] === -1) continue;
        best = best === -1 ? u : intersect(u, best);
      }
      if (best !== -1 && idom[k] !== best) {
        idom[k] = best;
        changed = true;
      }
    }
  }
  const retained = new Float64Array(n);
  for (let k = 0; k < n; k++) retained[k] = nodes[(post[k] as number) * NF + nSize] as number;
  for (let k = 0; k < n; k++) if (k !== root) retained[idom[k] as number] += retained[k] as number;

  const nameOf = (v: number): string => {
    const type = nodeTypes[nodes[v * NF + nType] as number] as string;
    const name = strings[nodes[v * NF + nName] as number] as string;
    return type === 'object' || type === 'closure' || type === 'native' ? name : `(${type})`;
  };
  const retainedOf = (v: number): number => ((order[v] as number) >= 0 ? (retained[order[v] as number] as number) : 0);
  const isHolder = (v: number): boolean => visited[v] === 1 && nodeTypes[nodes[v * NF + nType] as number] === 'object' && holders.has(strings[nodes[v * NF + nName] as number] as string);
  const edgeName = (e: number): string => {
    const type = edges[e + eType] as number;
    return type === ELEMENT || type === HIDDEN ? `[${edges[e + eName]}]` : (strings[edges[e + eName] as number] as string);
  };
  const out: string[] = [];
  let total = 0;
  for (let k = 0; k < n; k++) total += nodes[(post[k] as number) * NF + nSize] as number;
  out.push(`reachable heap: ${mib(total)} in ${n} nodes`);

  const byCtor = new Map<string, { self: number; count: number }>();
  for (let k = 0; k < n; k++) {
    const v = post[k] as number;
    const row = byCtor.get(nameOf(v)) ?? { self: 0, count: 0 };
    row.self += nodes[v * NF + nSize] as number;
    row.count++;
    byCtor.set(nameOf(v), row);
  }
  out.push('\nby constructor (self size, count):');
  for (const [name, row] of [...byCtor].sort((a, b) => b[1].self - a[1].self).slice(0, top)) out.push(`  ${mib(row.self).padStart(12)}  ${String(row.count).padStart(8)}  ${name.slice(0, 80)}`);

  // Reachable as data: not through code, shapes or scope contexts.
  const reachableFrom = (start: number): number => {
    const seen = new Uint8Array(count);
    const todo = [start];
    seen[start] = 1;
    let size = 0;
    while (todo.length > 0) {
      const v = todo.pop() as number;
      size += nodes[v * NF + nSize] as number;
      for (let e = firstEdge[v] as number; e < (firstEdge[v + 1] as number); e += EF) {
        if (!strong(e)) continue;
        const w = (edges[e + eTo] as number) / NF;
        const wName = nameOf(w);
        if (seen[w] || wName === '(code)' || wName === 'system / Context' || wName === '(hidden)') continue;
        seen[w] = 1;
        todo.push(w);
      }
    }
    return size;
  };
  out.push('\nholders (retained = dominated by it; reachable = all reachable from it as data, shared included):');
  for (let v = 0; v < count; v++) {
    if (!isHolder(v)) continue;
    out.push(`  ${nameOf(v)} @${v}: retained ${mib(retainedOf(v))}, reachable ${mib(reachableFrom(v))}`);
  }

  // Each node's owner: the nearest holder field (or holder) that dominates it.
  const ownerLabel = new Map<number, string>();
  for (let v = 0; v < count; v++) {
    if (!isHolder(v)) continue;
    ownerLabel.set(order[v] as number, nameOf(v));
    for (let e = firstEdge[v] as number; e < (firstEdge[v + 1] as number); e += EF) {
      if (!strong(e)) continue;
      const w = order[(edges[e + eTo] as number) / NF] as number;
      if (w >= 0 && idom[w] === order[v] && !ownerLabel.has(w)) ownerLabel.set(w, `${nameOf(v)}.${edgeName(e)}`);
    }
  }
  const owner = new Int32Array(n).fill(-1);
  // idom[k] > k (postorder): walking down the numbers meets each dominator before what it dominates.
  for (let k = n - 1; k >= 0; k--) owner[k] = ownerLabel.has(k) ? k : k === root ? -1 : (owner[idom[k] as number] as number);
  const byOwner = new Map<string, Map<string, { self: number; count: number }>>();
  for (let k = 0; k < n; k++) {
    const o = owner[k] as number;
    if (o < 0) continue;
    const label = ownerLabel.get(o) as string;
    let rows = byOwner.get(label);
    if (!rows) byOwner.set(label, (rows = new Map()));
    const ctor = nameOf(post[k] as number);
    const row = rows.get(ctor) ?? { self: 0, count: 0 };
    row.self += nodes[(post[k] as number) * NF + nSize] as number;
    row.count++;
    rows.set(ctor, row);
  }
  const totalOf = (rows: Map<string, { self: number }>): number => [...rows.values()].reduce((s, r) => s + r.self, 0);
  out.push('\nheld exclusively (dominated) by each holder field, by constructor:');
  for (const [label, rows] of [...byOwner].sort((a, b) => totalOf(b[1]) - totalOf(a[1]))) {
    if (totalOf(rows) < 256 * 1024) continue;
    out.push(`  ${mib(totalOf(rows)).padStart(12)}  ${label}: ${[...rows].sort((a, b) => b[1].self - a[1].self).slice(0, 5).map(([c, r]) => `${c.slice(0, 30)} ${mib(r.self)} (${r.count})`).join(', ')}`);
  }
  out.push('\nlargest retainers (objects, closures, arrays retaining ≥ 1 MiB):');
  const big: { v: number; r: number }[] = [];
  for (let k = 0; k < n; k++) {
    const v = post[k] as number;
    const t = nodeTypes[nodes[v * NF + nType] as number];
    if ((retained[k] as number) >= MiB && (t === 'object' || t === 'closure' || t === 'array')) big.push({ v, r: retained[k] as number });
  }
  for (const { v, r } of big.sort((a, b) => b.r - a.r).slice(0, top)) out.push(`  ${mib(r).padStart(12)}  ${nameOf(v).slice(0, 70)} @${v}`);
  return out.join('\n');
}

if (import.meta.main) {
  const { values, positionals } = parseArgs({ allowPositionals: true, options: { holders: { type: 'string' }, top: { type: 'string', default: '30' } } });
  const file = positionals[0];
  if (file === undefined) throw new Error('usage: config-thread-heap-summary.ts FILE.heapsnapshot');
  console.log(summariseHolders(readFileSync(file, 'utf8'), { ...(values.holders ? { holders: values.holders.split(',') } : {}), top: Number(values.top) }));
}
