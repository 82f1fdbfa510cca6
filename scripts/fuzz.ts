/**
 * On-demand fuzzing of the parsers that take attacker bytes (`npm run fuzz -- <target> …`).
 *
 * Each target is `fuzz/<target>.fuzz.ts`, exporting `fuzz(data: Buffer): void` in the
 * @jazzer.js/core convention: it returns for any input and throws only on a defect. With a working
 * Jazzer.js native addon the target runs coverage-guided under libFuzzer. Where the addon cannot
 * load (its prebuilt Linux binary needs glibc >= 2.38; Debian 12 has 2.36), the same target runs
 * under a mutation loop instead: random inputs plus byte-level mutations of inputs seen so far,
 * each timed, without coverage feedback. Either way a failing input is written to
 * `fuzz/findings/<target>/` so it can be replayed with `--replay FILE`.
 *
 *   node scripts/fuzz.ts --list
 *   node scripts/fuzz.ts sse --seconds 60
 *   node scripts/fuzz.ts sse --engine loop --seconds 30 --max-len 65536
 *   node scripts/fuzz.ts sse --replay fuzz/findings/sse/crash-…
 */
import { spawnSync } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';

const ROOT = resolve(import.meta.dirname, '..');
const TARGETS = join(ROOT, 'fuzz');
/** One input taking longer than this is a finding: every target's parser is bounded far below it. */
const SLOW_INPUT_MS = 2_000;

interface Options {
  seconds: number;
  maxLen: number;
  engine: 'auto' | 'jazzer' | 'loop';
  replay?: string;
}

function targets(): string[] {
  if (!existsSync(TARGETS)) return [];
  return readdirSync(TARGETS).filter((f) => f.endsWith('.fuzz.ts')).map((f) => f.slice(0, -'.fuzz.ts'.length)).sort();
}

/** Whether Jazzer.js's native libFuzzer addon loads on this machine; the reason when it does not. */
function jazzerAvailable(): { ok: true } | { ok: false; why: string } {
  try {
    createRequire(import.meta.url)('@jazzer.js/fuzzer');
    return { ok: true };
  } catch (err) {
    const message = (err as Error).message.split('\n')[0];
    return { ok: false, why: message };
  }
}

function runJazzer(target: string, opts: Options): number {
  const file = join(TARGETS, `${target}.fuzz.ts`);
  const corpus = join(TARGETS, 'corpus', target);
  mkdirSync(corpus, { recursive: true });
  const findings = join(TARGETS, 'findings', target);
  mkdirSync(findings, { recursive: true });
  const result = spawnSync(process.execPath, [
    join(ROOT, 'node_modules', '@jazzer.js', 'core', 'dist', 'cli.js'), file, corpus,
    '--sync', '--', `-max_total_time=${opts.seconds}`, `-max_len=${opts.maxLen}`, `-artifact_prefix=${findings}/`,
  ], { stdio: 'inherit', cwd: ROOT });
  return result.status ?? 1;
}

function mutate(seed: Buffer, maxLen: number): Buffer {
  const out = Buffer.from(seed);
  const edits = 1 + Math.floor(Math.random() * 8);
  let bytes: Buffer = out;
  for (let i = 0; i < edits; i++) {
    const at = bytes.length === 0 ? 0 : Math.floor(Math.random() * bytes.length);
    switch (Math.floor(Math.random() * 5)) {
      case 0: if (bytes.length > 0) bytes[at] = Math.floor(Math.random() * 256); break;
      case 1: bytes = Buffer.concat([bytes.subarray(0, at), randomBytes(1 + Math.floor(Math.random() * 16)), bytes.subarray(at)]); break;
      case 2: bytes = Buffer.concat([bytes.subarray(0, at), bytes.subarray(Math.min(bytes.length, at + 1 + Math.floor(Math.random() * 16)))]); break;
      case 3: { // duplicate a slice: grows nesting and repeated structure quickly
        const end = Math.min(bytes.length, at + 1 + Math.floor(Math.random() * 64));
        bytes = Buffer.concat([bytes.subarray(0, end), bytes.subarray(at, end), bytes.subarray(end)]);
        break;
      }
      case 4: { // splice in a token that parsers treat specially
        const tokens = ['{', '}', '[', ']', '"', '\\', '\n', '\r', ':', ',', 'data: ', '%2e', '%2F', '..', '/', '&', '*', '- ', '\u0000'];
        bytes = Buffer.concat([bytes.subarray(0, at), Buffer.from(tokens[Math.floor(Math.random() * tokens.length)]), bytes.subarray(at)]);
        break;
      }
    }
  }
  return bytes.length > maxLen ? bytes.subarray(0, maxLen) : bytes;
}

function saveFinding(target: string, input: Buffer, kind: string): string {
  const dir = join(TARGETS, 'findings', target);
  mkdirSync(dir, { recursive: true });
  const file = join(dir, `${kind}-${createHash('sha256').update(input).digest('hex').slice(0, 16)}`);
  writeFileSync(file, input);
  return file;
}

async function runLoop(target: string, fuzz: (data: Buffer) => void, opts: Options): Promise<number> {
  const corpusDir = join(TARGETS, 'corpus', target);
  const pool: Buffer[] = existsSync(corpusDir) ? readdirSync(corpusDir).map((f) => readFileSync(join(corpusDir, f))) : [];
  if (pool.length === 0) pool.push(Buffer.alloc(0));
  const deadline = performance.now() + opts.seconds * 1000;
  let runs = 0;
  let slowest = 0;
  while (performance.now() < deadline) {
    const input = Math.random() < 0.2
      ? randomBytes(Math.floor(Math.random() * Math.min(opts.maxLen, 4096)))
      : mutate(pool[Math.floor(Math.random() * pool.length)], opts.maxLen);
    const t0 = performance.now();
    try {
      fuzz(input);
    } catch (err) {
      const file = saveFinding(target, input, 'crash');
      console.error(`${target}: defect after ${runs} runs: ${(err as Error).stack ?? String(err)}\ninput saved to ${file}`);
      return 1;
    }
    const ms = performance.now() - t0;
    slowest = Math.max(slowest, ms);
    if (ms > SLOW_INPUT_MS) {
      const file = saveFinding(target, input, 'slow');
      console.error(`${target}: one input took ${ms.toFixed(0)} ms (> ${SLOW_INPUT_MS}); input saved to ${file}`);
      return 1;
    }
    // Keep a bounded, varied pool so mutations build on structure the parser accepted.
    if (pool.length < 512) pool.push(input);
    else pool[Math.floor(Math.random() * pool.length)] = input;
    runs++;
  }
  console.log(`${target}: ${runs} inputs in ${opts.seconds} s without a finding (mutation loop, no coverage feedback); slowest ${slowest.toFixed(1)} ms`);
  return 0;
}

async function main(): Promise<number> {
  const { values, positionals } = parseArgs({
    allowPositionals: true,
    options: {
      seconds: { type: 'string', default: '60' },
      'max-len': { type: 'string', default: '1048576' },
      engine: { type: 'string', default: 'auto' },
      replay: { type: 'string' },
      list: { type: 'boolean', default: false },
    },
  });
  const available = targets();
  if (values.list || positionals.length === 0) {
    console.log(`targets: ${available.join(', ') || '(none)'}\nusage: node scripts/fuzz.ts <target> [--seconds N] [--max-len BYTES] [--engine auto|jazzer|loop] [--replay FILE]`);
    return positionals.length === 0 && !values.list ? 2 : 0;
  }
  const target = positionals[0];
  if (!available.includes(target)) {
    console.error(`no fuzz target "${target}"; targets: ${available.join(', ')}`);
    return 2;
  }
  const engine = values.engine;
  if (engine !== 'auto' && engine !== 'jazzer' && engine !== 'loop') {
    console.error(`--engine must be auto, jazzer or loop, not "${engine}"`);
    return 2;
  }
  const opts: Options = { seconds: Number(values.seconds), maxLen: Number(values['max-len']), engine, replay: values.replay };
  const module = await import(pathToFileURL(join(TARGETS, `${target}.fuzz.ts`)).href) as { fuzz?: (data: Buffer) => void };
  if (typeof module.fuzz !== 'function') {
    console.error(`fuzz/${target}.fuzz.ts does not export fuzz(data)`);
    return 2;
  }
  if (opts.replay !== undefined) {
    module.fuzz(readFileSync(opts.replay));
    console.log(`${target}: ${opts.replay} passes`);
    return 0;
  }
  if (opts.engine !== 'loop') {
    const jazzer = jazzerAvailable();
    if (jazzer.ok) return runJazzer(target, opts);
    if (opts.engine === 'jazzer') {
      console.error(`Jazzer.js cannot run here: ${jazzer.why}`);
      return 1;
    }
    console.error(`Jazzer.js cannot run here (${jazzer.why}); using the mutation loop instead`);
  }
  return runLoop(target, module.fuzz, opts);
}

process.exitCode = await main();
