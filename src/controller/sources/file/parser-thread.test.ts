import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, it } from 'node:test';
import { pino } from 'pino';
import { DEFAULT_CONFIG_LIMITS } from './limits.ts';
import { ParserThread } from './parser-thread.ts';
import type { FileRead } from './read.ts';

const misbehaving = new URL('./testdata/misbehaving-parser-thread.ts', import.meta.url);
const service = (name: string): string => `apiVersion: v1\nkind: Service\nmetadata: { name: ${name}, namespace: default }\nspec: { ports: [{ port: 80 }] }\n`;

/** The names of the objects a read parsed, or its first problem's message. */
function outcome(read: FileRead): string {
  if (read.kind !== 'read') return read.kind;
  if (!read.parsed.syntaxOk) return `broken: ${read.parsed.problems[0]?.message}`;
  return read.parsed.objects.map((o) => o.object.metadata.name).join(',');
}

describe('ParserThread: reads asked for at once', () => {
  let dir: string;
  let parser: ParserThread | undefined;
  afterEach(async () => {
    await parser?.close();
    parser = undefined;
    rmSync(dir, { recursive: true, force: true });
  });
  const file = (name: string, text: string): string => {
    const path = join(dir, name);
    writeFileSync(path, text);
    return path;
  };

  it('a file past the time limit fails alone: the files queued after it are parsed by a new thread', async () => {
    dir = mkdtempSync(join(tmpdir(), 'switchboard-parser-thread-'));
    // Room for a thread to start under load: the file after the hung one waits for a new thread.
    parser = new ParserThread({ limits: DEFAULT_CONFIG_LIMITS, logger: pino({ level: 'silent' }), timeoutMs: 3000, workerModule: misbehaving });
    const reads = [file('a.yaml', service('a')), file('hang.yaml', service('h')), file('b.yaml', service('b')), file('c.yaml', service('c'))].map((f) => parser!.read(f, undefined));
    const outcomes = (await Promise.all(reads)).map(outcome);
    assert.deepEqual(outcomes, ['a', 'broken: over a configuration limit: parsing took longer than 3 s', 'b', 'c']);
  });

  it("each file's clock starts when the files before it are answered, not when it was asked for", async () => {
    dir = mkdtempSync(join(tmpdir(), 'switchboard-parser-thread-'));
    parser = new ParserThread({ limits: DEFAULT_CONFIG_LIMITS, logger: pino({ level: 'silent' }), timeoutMs: 1500, workerModule: misbehaving });
    // Started and answering first: the thread's start-up is not what this measures.
    assert.equal(outcome(await parser.read(file('warm.yaml', service('warm')), undefined)), 'warm');
    // Four files of 400 ms each: the last is answered ~1.6 s after it was asked for, within its own 1.5 s.
    const reads = ['slow-1', 'slow-2', 'slow-3', 'slow-4'].map((name) => parser!.read(file(`${name}.yaml`, service(name)), undefined));
    assert.deepEqual((await Promise.all(reads)).map(outcome), ['slow-1', 'slow-2', 'slow-3', 'slow-4']);
  });

  it('gives back the memory a parse grew once quiet (the idle GC, src/common/idle-gc.ts)', async () => {
    dir = mkdtempSync(join(tmpdir(), 'switchboard-parser-thread-'));
    // Opt-in (it costs edit latency): a worker copies the environment when it is created.
    process.env.SWITCHBOARD_IDLE_GC = '1';
    try {
      parser = new ParserThread({ limits: DEFAULT_CONFIG_LIMITS, logger: pino({ level: 'silent' }) });
      parser.prestart();
    } finally {
      delete process.env.SWITCHBOARD_IDLE_GC;
    }
    const big = file('big.yaml', Array.from({ length: 4000 }, (_, i) => service(`s${i}`)).join('---\n'));
    assert.equal(outcome(await parser.read(big, undefined)).split(',').length, 4000);
    const afterParse = (await parser.heapStatistics())?.total_physical_size ?? 0;
    // The GC comes 2 s after the thread's last read.
    let now = afterParse;
    for (const deadline = Date.now() + 6000; Date.now() < deadline && now > afterParse * 0.8;) {
      await new Promise((resolve) => setTimeout(resolve, 250));
      now = (await parser.heapStatistics())?.total_physical_size ?? 0;
    }
    assert.ok(now < afterParse * 0.8, `the thread's heap shrank by a fifth: ${afterParse} → ${now} bytes`);
  });
});
