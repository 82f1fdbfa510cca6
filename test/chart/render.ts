/**
 * Renders chart/ with test/chart/render.go (Go's text/template + sprig, Helm's functions as
 * documented there) and parses the output into objects. Values are coalesced over values.yaml the
 * way Helm coalesces --set/-f values: maps merge key by key, anything else replaces, null deletes.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parse, parseAllDocuments } from 'yaml';

export const CHART_DIR = join(import.meta.dirname, '..', '..', 'chart');
const SOURCE = join(import.meta.dirname, 'render.go');
/** Debian's packaged Go sources (sprig and its dependencies, yaml.v3); GOPATH mode needs no network. */
const GOPATH = '/usr/share/gocode';

export const GO_AVAILABLE = spawnSync('go', ['version']).status === 0
  && spawnSync('test', ['-d', join(GOPATH, 'src/github.com/Masterminds/sprig')]).status === 0;
export const GO_SKIP = GO_AVAILABLE ? false : 'go or sprig is not installed: apt-get install golang golang-github-masterminds-sprig-dev';

let binary: string | undefined;
function renderer(): string {
  if (binary) return binary;
  const out = join(mkdtempSync(join(tmpdir(), 'switchboard-chart-')), 'render');
  const build = spawnSync('go', ['build', '-o', out, SOURCE], {
    env: { ...process.env, GO111MODULE: 'off', GOPATH, GOFLAGS: '', GOPROXY: 'off' },
    encoding: 'utf8',
  });
  if (build.status !== 0) throw new Error(`go build test/chart/render.go failed:\n${build.stderr}`);
  binary = out;
  return out;
}

type Json = Record<string, unknown>;
const isMap = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Helm's coalescing of user values over the chart's defaults. */
export function coalesce(defaults: unknown, overrides: unknown): unknown {
  if (!isMap(defaults) || !isMap(overrides)) return overrides === undefined ? defaults : overrides;
  const out: Json = { ...defaults };
  for (const [k, v] of Object.entries(overrides)) {
    if (v === null) delete out[k];
    else out[k] = coalesce(defaults[k], v);
  }
  return out;
}

export function defaultValues(chartDir = CHART_DIR): Json {
  return parse(readFileSync(join(chartDir, 'values.yaml'), 'utf8')) as Json;
}

export interface Rendered {
  /** Template file → its rendered text. */
  files: Record<string, string>;
  objects: Json[];
}

/** Renders the chart with `overrides` coalesced over values.yaml; throws the template's error. */
export function renderChart(overrides: Json = {}, release = { name: 'sb', namespace: 'switchboard-system' }, chartDir = CHART_DIR): Rendered {
  const values = coalesce(defaultValues(chartDir), overrides);
  const run = spawnSync(renderer(), [], { input: JSON.stringify({ chartDir, values, release }), encoding: 'utf8' });
  const answer = JSON.parse(run.stdout || '{}') as Record<string, string>;
  if (run.status !== 0) throw new Error(answer.error ?? run.stderr);
  const objects: Json[] = [];
  for (const [file, text] of Object.entries(answer)) {
    for (const doc of parseAllDocuments(text)) {
      if (doc.errors.length > 0) throw new Error(`${file}: ${doc.errors.map((e) => e.message).join('; ')}\n${text}`);
      const object = doc.toJS() as unknown;
      if (object === null || object === undefined) continue;
      if (!isMap(object)) throw new Error(`${file}: a document that is not an object`);
      objects.push(object);
    }
  }
  return { files: answer, objects };
}

/** The one rendered object of `kind` (and `name` when several). */
export function find(r: Rendered, kind: string, name?: string): Json | undefined {
  return r.objects.find((o) => o.kind === kind && (name === undefined || (o.metadata as Json).name === name));
}
