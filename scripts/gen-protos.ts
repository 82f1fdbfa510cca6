/**
 * Regenerates src/proxy/ext/gen/ (protoc-gen-es, JS + .d.ts) from the Envoy .proto files shipped
 * inside @grpc/grpc-js-xds, with buf (npm run gen:protos). `--out <dir>` writes the tree under
 * another directory instead, which the staleness test uses to compare with the committed output.
 *
 * buf only accepts module paths inside its workspace, so it runs from the repository root with
 * proto/buf.yaml passed as the workspace config (its module paths are relative to the root).
 */
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { bufBinary } from './buf-binary.ts';
import { parseArgs } from 'node:util';

const root = join(import.meta.dirname, '..');
const { values } = parseArgs({ options: { out: { type: 'string' } } });
const bin = join(root, 'node_modules', '.bin');

execFileSync(bufBinary(root), [
  'generate',
  '--template', join('proto', 'buf.gen.yaml'),
  '--config', join('proto', 'buf.yaml'),
  ...(values.out ? ['--output', values.out] : []),
], {
  cwd: root,
  stdio: 'inherit',
  // protoc-gen-es is a Node script: run it on the pinned Node 24, whatever called us.
  env: { ...process.env, PATH: `${bin}:${process.env.PATH ?? ''}` },
});
if (!values.out) console.log('wrote src/proxy/ext/gen/');
// Our own config distribution protocol (issue 15) has its own buf template and output directory.
if (!values.out) execFileSync(process.execPath, [join(root, 'proto', 'switchboard', 'config', 'gen.ts')], { cwd: root, stdio: 'inherit' });
