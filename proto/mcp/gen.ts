/**
 * Regenerates src/proxy/mcp/guardrails/gen/ (protoc-gen-es, JS + .d.ts) from
 * proto/mcp/guardrail.proto with buf: `node proto/mcp/gen.ts`. `--out <dir>` writes the tree under
 * another directory instead, which the staleness test uses to compare with the committed output.
 * buf runs from the repository root (module paths in proto/mcp/buf.yaml are relative to it).
 */
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { bufBinary } from '../../scripts/buf-binary.ts';

const root = join(import.meta.dirname, '..', '..');
const { values } = parseArgs({ options: { out: { type: 'string' } } });
const bin = join(root, 'node_modules', '.bin');

execFileSync(bufBinary(root), [
  'generate',
  '--template', join('proto', 'mcp', 'buf.gen.yaml'),
  '--config', join('proto', 'mcp', 'buf.yaml'),
  ...(values.out ? ['--output', values.out] : []),
], {
  cwd: root,
  stdio: 'inherit',
  env: { ...process.env, PATH: `${bin}:${process.env.PATH ?? ''}` },
});
if (!values.out) console.log('wrote src/proxy/mcp/guardrails/gen/');
