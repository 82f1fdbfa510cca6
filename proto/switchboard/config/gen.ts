/**
 * Regenerates src/distribute/remote/gen/ (protoc-gen-es, JS + .d.ts) from
 * proto/switchboard/config/v1/*.proto with buf: `node proto/switchboard/config/gen.ts`. `--out
 * <dir>` writes the tree under another directory instead, which the staleness test uses to compare
 * with the committed output. buf runs from the repository root (module paths in buf.yaml are
 * relative to it).
 */
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { bufBinary } from '../../../scripts/buf-binary.ts';

const root = join(import.meta.dirname, '..', '..', '..');
const { values } = parseArgs({ options: { out: { type: 'string' } } });
const bin = join(root, 'node_modules', '.bin');

execFileSync(bufBinary(root), [
  'generate',
  '--template', join('proto', 'switchboard', 'config', 'buf.gen.yaml'),
  '--config', join('proto', 'switchboard', 'config', 'buf.yaml'),
  ...(values.out ? ['--output', values.out] : []),
], {
  cwd: root,
  stdio: 'inherit',
  env: { ...process.env, PATH: `${bin}:${process.env.PATH ?? ''}` },
});
if (!values.out) console.log('wrote src/distribute/remote/gen/');
