/**
 * Regenerates test/otlp/gen/ (protoc-gen-es, TypeScript) from the opentelemetry-proto files in
 * test/otlp/proto/opentelemetry with buf: `node test/otlp/proto/gen.ts`. `--out <dir>` writes the
 * tree under another directory instead (the staleness test compares it with the committed code).
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
  '--template', join('test', 'otlp', 'proto', 'buf.gen.yaml'),
  '--config', join('test', 'otlp', 'proto', 'buf.yaml'),
  ...(values.out ? ['--output', values.out] : []),
], {
  cwd: root,
  stdio: 'inherit',
  env: { ...process.env, PATH: `${bin}:${process.env.PATH ?? ''}` },
});
if (!values.out) console.log('wrote test/otlp/gen/');
