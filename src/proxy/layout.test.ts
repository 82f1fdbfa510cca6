// Guards the data plane's layering: the top-level folders under src/proxy (files directly in
// src/proxy count as "."; the pure LLM translation library llm/translate/ counts as its own
// folder) import only folders of a LOWER layer, so each folder can be read, tested and replaced
// from the bottom up and no two folders import each other, directly or through a cycle.
//
// The layers, lowest first (docs/architecture.md "Folders and layers" explains each):
//
//   0  http            wire helpers every layer shares: headers, bounded bodies, SSE, paths, the
//                      ProxyError union and its renderers, the client's request/response types and
//                      writers (downstream.ts), header modifiers
//   1  routing, telemetry, ext, llm/translate, a2a
//                      route tables and pickers; metrics and access-log records; clients of
//                      external services (ext_authz, ext_proc, rate limit); the pure LLM library;
//                      the A2A agent card rewrite and the A2A CEL input (pure, below the policies that use them)
//   2  policies        policy context and results, traffic/frontend/backend members, the
//                      backend-policy layer (connections, pools, credentials) every upstream call uses
//   3  backends        compiled backends and the in-process handler contract (handlers.ts)
//   4  filters, llm, mcp, testing
//                      route filters; the backend kinds served in-process; test support
//   5  compile         IR → compiled config (listeners, rules, backends with their policies)
//   6  pipeline        the one request lifecycle (admit → … → log)
//   7  server          sockets, TLS and HTTP servers per bind
//   8  .               runtime.ts and the list of backend kinds it plugs in (handler-factories.ts)
//
// A lower layer that must reach a higher one takes a callback or a registry from it (the runtime
// hands BACKEND_HANDLER_FACTORIES to backends/handlers.ts); a type several layers need lives in
// the lowest layer that owns its concept.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';

const PROXY_ROOT = dirname(fileURLToPath(import.meta.url));

/** Each folder's layer; a folder may import only folders of a lower one. */
const LAYER: Readonly<Record<string, number>> = {
  http: 0,
  routing: 1,
  telemetry: 1,
  ext: 1,
  'llm/translate': 1,
  a2a: 1,
  policies: 2,
  backends: 3,
  filters: 4,
  llm: 4,
  mcp: 4,
  testing: 4,
  compile: 5,
  pipeline: 6,
  server: 7,
  '.': 8,
};

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

/** The folder (as LAYER names it) under src/proxy that holds `path`, or undefined outside src/proxy. */
function folderOf(path: string): string | undefined {
  const rel = relative(PROXY_ROOT, path);
  if (rel.startsWith('..')) return undefined;
  const parts = rel.split(sep);
  if (parts.length === 1) return '.';
  if (parts[0] === 'llm' && parts[1] === 'translate' && parts.length > 2) return 'llm/translate';
  return parts[0];
}

/** Edges folder → folder, each with the first import seen that makes it. */
function folderGraph(): Map<string, Map<string, ImportSite>> {
  const graph = new Map<string, Map<string, ImportSite>>();
  for (const file of sourceFiles(PROXY_ROOT)) {
    const from = folderOf(file);
    if (from === undefined) continue;
    if (!graph.has(from)) graph.set(from, new Map());
    const text = readFileSync(file, 'utf8');
    for (const match of text.matchAll(IMPORT_PATTERN)) {
      const specifier = match[1];
      const to = folderOf(resolve(dirname(file), specifier));
      if (to === undefined || to === from) continue;
      const edges = graph.get(from)!;
      if (!edges.has(to)) edges.set(to, { file: relative(PROXY_ROOT, file), specifier });
    }
  }
  return graph;
}

/** Every edge `from -> to` that does not go to a strictly lower layer. */
function upwardEdges(graph: ReadonlyMap<string, ReadonlyMap<string, ImportSite>>, layer: Readonly<Record<string, number>>): Map<string, ImportSite> {
  const edges = new Map<string, ImportSite>();
  for (const [from, targets] of graph) {
    for (const [to, site] of targets) if (!(layer[from] > layer[to])) edges.set(`${from} -> ${to}`, site);
  }
  return edges;
}

test('every folder of src/proxy has a layer', () => {
  const graph = folderGraph();
  assert.ok(graph.size > 10, 'the scan found the proxy folders');
  const unplaced = [...graph.keys()].filter((folder) => LAYER[folder] === undefined);
  assert.deepEqual(unplaced, [], 'give these folders a layer in LAYER (and docs/architecture.md)');
});

test('the folders of src/proxy import only lower layers', () => {
  const edges = [...upwardEdges(folderGraph(), LAYER)];
  assert.equal(
    edges.length,
    0,
    `import(s) into the same or a higher layer — move the shared piece down to the layer that owns it, or pass a callback (see the layer list at the top of this file):\n${edges
      .map(([edge, s]) => `  ${edge}   e.g. ${s.file} imports '${s.specifier}'`)
      .join('\n')}`,
  );
});

test('the layer check refuses an upward, a sideways and a cyclic import and accepts a downward one', () => {
  const site: ImportSite = { file: 'x.ts', specifier: './y.ts' };
  const layer = { low: 0, mid: 1, peer: 1, high: 2 };
  const graph = new Map([
    ['high', new Map([['low', site]])],
    ['mid', new Map([['low', site], ['peer', site], ['high', site]])],
    ['low', new Map([['mid', site]])],
  ]);
  assert.deepEqual([...upwardEdges(graph, layer).keys()].sort(), ['low -> mid', 'mid -> high', 'mid -> peer']);
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
