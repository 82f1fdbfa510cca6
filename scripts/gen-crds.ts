/** Writes chart/crds/<plural>.switchboard.dev.yaml from the typebox schemas (npm run gen:crds). */
import { mkdirSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { crdFiles } from '../src/api/crd/render.ts';

const dir = join(import.meta.dirname, '..', 'chart', 'crds');
mkdirSync(dir, { recursive: true });
const files = crdFiles();
const wanted = new Set(files.map((f) => f.name));
// Remove CRDs of kinds that no longer exist, so the chart never installs a stale one.
for (const name of readdirSync(dir)) if (name.endsWith('.switchboard.dev.yaml') && !wanted.has(name)) rmSync(join(dir, name));
for (const f of files) writeFileSync(join(dir, f.name), f.content);
console.log(`wrote ${files.length} CRDs to ${dir}`);
