// Guards the data plane's folder layout: the top-level folders under src/proxy (llm, mcp,
// pipeline, policies, http, …; files directly in src/proxy count as ".") must import each
// other without cycles, so each folder can be read, tested and replaced from the bottom up.
// The cyclic folder edges that already exist are listed in KNOWN_CYCLE_EDGES; any other edge
// that lies on a cycle fails this test, printed with one example import per edge.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';

const PROXY_ROOT = dirname(fileURLToPath(import.meta.url));

/**
 * Folder edges that lay on a cycle when this guard was added (issue 12 item 10): today most
 * folders form one strongly connected component, so the allow-list is per edge rather than per
 * cycle — a new import between two folders that closes a loop fails even inside that component.
 * Remove an entry once its edge is gone or no longer cyclic (the test says which); never add one
 * to make a new cycle pass.
 */
const KNOWN_CYCLE_EDGES: ReadonlySet<string> = new Set([
  '. -> backends',
  '. -> compile',
  '. -> pipeline',
  '. -> policies',
  '. -> server',
  'backends -> llm',
  'backends -> mcp',
  'backends -> pipeline',
  'backends -> policies',
  'compile -> backends',
  'compile -> filters',
  'compile -> policies',
  'compile -> server',
  'filters -> backends',
  'llm -> backends',
  'llm -> pipeline',
  'llm -> policies',
  'mcp -> backends',
  'mcp -> compile',
  'mcp -> pipeline',
  'mcp -> policies',
  'pipeline -> .',
  'pipeline -> backends',
  'pipeline -> compile',
  'pipeline -> filters',
  'pipeline -> mcp',
  'pipeline -> policies',
  'policies -> backends',
  'policies -> filters',
  'policies -> mcp',
  'policies -> pipeline',
  'policies -> testing',
  'server -> compile',
  'server -> pipeline',
  'server -> policies',
  'testing -> policies',
]);

const IMPORT_PATTERN = /(?:\bfrom\s*|\bimport\s*\(\s*)['"](\.{1,2}\/[^'"]+)['"]/g;

interface ImportSite {
  readonly file: string;
  readonly specifier: string;
}

function sourceFiles(dir: string): string[] {
  const files: string[] = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) files.push(...sourceFiles(path));
    else if (entry.name.endsWith('.ts') && !entry.name.endsWith('.test.ts')) files.push(path);
  }
  return files;
}

/** The top-level folder under src/proxy that holds `path`, or undefined outside src/proxy. */
function topFolder(path: string): string | undefined {
  const rel = relative(PROXY_ROOT, path);
  if (rel.startsWith('..')) return undefined;
  const parts = rel.split(sep);
  return parts.length === 1 ? '.' : parts[0];
}

/** Edges folder → folder, each with the first import seen that makes it. */
function folderGraph(): Map<string, Map<string, ImportSite>> {
  const graph = new Map<string, Map<string, ImportSite>>();
  for (const file of sourceFiles(PROXY_ROOT)) {
    const from = topFolder(file);
    if (from === undefined) continue;
    const text = readFileSync(file, 'utf8');
    for (const match of text.matchAll(IMPORT_PATTERN)) {
      const specifier = match[1];
      const to = topFolder(resolve(dirname(file), specifier));
      if (to === undefined || to === from) continue;
      let edges = graph.get(from);
      if (!edges) graph.set(from, (edges = new Map()));
      if (!edges.has(to)) edges.set(to, { file: relative(PROXY_ROOT, file), specifier });
    }
  }
  return graph;
}

/** Strongly connected components with more than one folder (Tarjan's algorithm). */
function cycles(graph: Map<string, Map<string, ImportSite>>): string[][] {
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const found: string[][] = [];
  let counter = 0;
  const visit = (node: string): void => {
    index.set(node, counter);
    low.set(node, counter);
    counter += 1;
    stack.push(node);
    onStack.add(node);
    for (const next of graph.get(node)?.keys() ?? []) {
      if (!index.has(next)) {
        visit(next);
        low.set(node, Math.min(low.get(node)!, low.get(next)!));
      } else if (onStack.has(next)) {
        low.set(node, Math.min(low.get(node)!, index.get(next)!));
      }
    }
    if (low.get(node) === index.get(node)) {
      const component: string[] = [];
      let member: string;
      do {
        member = stack.pop()!;
        onStack.delete(member);
        component.push(member);
      } while (member !== node);
      if (component.length > 1) found.push(component.sort());
    }
  };
  for (const node of graph.keys()) if (!index.has(node)) visit(node);
  return found;
}

function describe(component: string[], graph: Map<string, Map<string, ImportSite>>): string {
  const members = new Set(component);
  const lines = [`cycle between ${component.join(', ')}:`];
  for (const from of component) {
    for (const [to, site] of graph.get(from) ?? []) {
      if (members.has(to)) lines.push(`  ${from} -> ${to}   e.g. ${site.file} imports '${site.specifier}'`);
    }
  }
  return lines.join('\n');
}

/** Every edge `from -> to` whose two ends are in the same cycle. */
function cyclicEdges(graph: Map<string, Map<string, ImportSite>>): Map<string, ImportSite> {
  const edges = new Map<string, ImportSite>();
  for (const component of cycles(graph)) {
    const members = new Set(component);
    for (const from of component) {
      for (const [to, site] of graph.get(from) ?? []) if (members.has(to)) edges.set(`${from} -> ${to}`, site);
    }
  }
  return edges;
}

test('the top-level folders of src/proxy import each other without new cycles', () => {
  const graph = folderGraph();
  assert.ok(graph.size > 3, 'the scan found the proxy folders and their imports');
  const edges = cyclicEdges(graph);
  const unexpected = [...edges].filter(([edge]) => !KNOWN_CYCLE_EDGES.has(edge));
  assert.equal(
    unexpected.length,
    0,
    `new import cycle(s) between src/proxy folders:\n${unexpected.map(([edge, s]) => `  ${edge}   e.g. ${s.file} imports '${s.specifier}'`).join('\n')}\n\n${cycles(graph).map((c) => describe(c, graph)).join('\n')}`,
  );
  const stale = [...KNOWN_CYCLE_EDGES].filter((edge) => !edges.has(edge));
  assert.deepEqual(stale, [], 'these allow-listed edges are no longer on a cycle: remove them from KNOWN_CYCLE_EDGES');
});

test('the cycle finder sees a two-folder cycle and ignores a chain', () => {
  const site: ImportSite = { file: 'x.ts', specifier: './y.ts' };
  const withCycle = new Map([
    ['a', new Map([['b', site]])],
    ['b', new Map([['c', site]])],
    ['c', new Map([['b', site]])],
  ]);
  assert.deepEqual(cycles(withCycle), [['b', 'c']]);
  const chain = new Map([
    ['a', new Map([['b', site]])],
    ['b', new Map([['c', site]])],
  ]);
  assert.deepEqual(cycles(chain), []);
});

// The LLM translation library (src/proxy/llm/translate/, entered through plan.ts) is pure: it
// reaches only itself, the shared HTTP helpers (src/proxy/http/) and the IR, and no module that
// opens sockets, keeps timers or logs. The runtime that does those things is llm/gateway/.
const TRANSLATE_ROOT = join(PROXY_ROOT, 'llm', 'translate');
const TRANSLATE_MAY_REACH = [TRANSLATE_ROOT, join(PROXY_ROOT, 'http'), resolve(PROXY_ROOT, '..', 'ir')];
const IMPURE_PACKAGE = /^(undici|ws|node:(net|tls|http|https|http2|dgram|timers(\/promises)?|child_process|worker_threads))$/;
const ANY_IMPORT_PATTERN = /(?:\bfrom\s*|\bimport\s*\(\s*|\bimport\s+)['"]([^'"]+)['"]/g;

test('the LLM translation library imports nothing from the runtime', () => {
  const offending: string[] = [];
  const files = sourceFiles(TRANSLATE_ROOT).filter((f) => !f.startsWith(join(TRANSLATE_ROOT, 'testing') + sep));
  assert.ok(files.length > 20, 'the scan found the translation library');
  for (const file of files) {
    const text = readFileSync(file, 'utf8');
    const where = relative(PROXY_ROOT, file);
    if (/\bset(Timeout|Interval|Immediate)\s*\(/.test(text)) offending.push(`${where} starts a timer`);
    for (const match of text.matchAll(ANY_IMPORT_PATTERN)) {
      const specifier = match[1];
      if (specifier.startsWith('.')) {
        const target = resolve(dirname(file), specifier);
        if (!TRANSLATE_MAY_REACH.some((root) => target.startsWith(root + sep))) offending.push(`${where} imports '${specifier}'`);
      } else if (IMPURE_PACKAGE.test(specifier) || /logger/.test(specifier)) {
        offending.push(`${where} imports '${specifier}'`);
      }
    }
  }
  assert.deepEqual(offending, [], 'llm/translate/ must stay pure; runtime code belongs in llm/gateway/');
});
