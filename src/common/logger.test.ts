import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { describe, it } from 'node:test';
import { parseLogFilter } from './log-filter.ts';
import { createLogger, moduleLogger, scrubLogLine, setLoggedSecrets } from './logger.ts';

/** What a logger made by createLogger writes (text as it renders for a terminal). */
function captured(format: 'json' | 'text', log: (logger: ReturnType<typeof createLogger>) => void): string {
  const chunks: string[] = [];
  log(createLogger({ format, level: 'info', destination: { write: (line: string) => chunks.push(line) }, textOnPipes: format === 'text' }));
  return chunks.join('');
}

describe('logger redaction', () => {
  const pem = '-----BEGIN PRIVATE KEY-----\nMIIEvQIBADANBgkqhkiG9w0BAQEFAASC\n-----END PRIVATE KEY-----\n';
  for (const format of ['json', 'text'] as const) {
    it(`${format}: registered secret values never reach a line, raw or JSON-escaped`, () => {
      setLoggedSecrets(['sk-provider-0123456789', pem]);
      try {
        const out = captured(format, (logger) => {
          logger.error({ err: 'provider said: invalid key Bearer sk-provider-0123456789' }, 'failed');
          logger.warn({ key: pem }, 'could not parse the key');
        });
        assert.ok(!out.includes('sk-provider-0123456789'));
        assert.ok(!out.includes('MIIEvQIBADANBgkqhkiG9w0BAQEFAASC'));
        assert.match(out, /\[redacted\]/);
      } finally {
        setLoggedSecrets([]);
      }
    });

    it(`${format}: credential headers in a logged headers map are redacted by path`, () => {
      const out = captured(format, (logger) => logger.info({ req: { headers: { authorization: 'Bearer client-abcdefgh', cookie: 'sid=1234567', 'x-api-key': 'k-9876543', accept: 'text/plain' } } }, 'request'));
      for (const leaked of ['client-abcdefgh', 'sid=1234567', 'k-9876543']) assert.ok(!out.includes(leaked), leaked);
      assert.ok(out.includes('text/plain'));
    });
  }

  it('scrubLogLine is the identity when nothing is registered', () => {
    setLoggedSecrets([]);
    assert.equal(scrubLogLine('{"msg":"x"}\n'), '{"msg":"x"}\n');
  });
});

describe('logger output', () => {
  it('text renders `time LEVEL msg key=value` for a terminal; json stays JSON', () => {
    assert.match(captured('text', (l) => l.info({ status: 200 }, 'request')), /^\S+Z INFO {2}request status=200\n$/);
    assert.equal(JSON.parse(captured('json', (l) => l.info({ status: 200 }, 'request'))).status, 200);
  });

  it('text on a pipe or file is written as JSON (no parse and re-render per line)', () => {
    const chunks: string[] = [];
    createLogger({ format: 'text', level: 'info', destination: { write: (line: string) => chunks.push(line) } }).info({ status: 200 }, 'request');
    assert.equal(JSON.parse(chunks.join('')).msg, 'request');
  });

  it('no buffered line is lost when the process exits after SIGTERM', async () => {
    // A child logs more lines than one buffer holds and a last one at SIGTERM, then exits as the CLI does.
    const child = spawn(process.execPath, ['--input-type=module', '-e', `
      import { createLogger } from ${JSON.stringify(new URL('./logger.ts', import.meta.url).href)};
      const logger = createLogger({ format: 'json', level: 'info' });
      for (let i = 0; i < 5000; i++) logger.info({ i }, 'line');
      process.on('SIGTERM', () => { logger.info('last'); process.exit(0); });
      process.stderr.write('ready');
      setInterval(() => {}, 1000);
    `], { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.setEncoding('utf8').on('data', (c: string) => { out += c; });
    await new Promise<void>((resolve) => child.stderr.once('data', () => resolve()));
    child.kill('SIGTERM');
    await new Promise((resolve) => child.once('close', resolve));
    const lines = out.split('\n').filter(Boolean).map((l) => JSON.parse(l) as { msg: string });
    assert.equal(lines.length, 5001);
    assert.equal(lines.at(-1)?.msg, 'last');
  });
});

describe('the process stdout writer', () => {
  const LOGGER = JSON.stringify(new URL('./logger.ts', import.meta.url).href);

  it('a quiet process shows its one line within the flush interval, without exiting', async () => {
    const child = spawn(process.execPath, ['--input-type=module', '-e', `
      import { createLogger } from ${LOGGER};
      createLogger({ format: 'json', level: 'info' }).info('alone');
      setInterval(() => {}, 1000);
    `], { stdio: ['ignore', 'pipe', 'inherit'] });
    try {
      const line = await new Promise<string>((resolve) => child.stdout.setEncoding('utf8').once('data', resolve));
      assert.equal((JSON.parse(line) as { msg: string }).msg, 'alone');
    } finally {
      child.kill('SIGKILL');
    }
  });

  it('more lines than one batch arrive whole and in order while the process runs', async () => {
    const child = spawn(process.execPath, ['--input-type=module', '-e', `
      import { createLogger } from ${LOGGER};
      const logger = createLogger({ format: 'json', level: 'info' });
      for (let i = 0; i < 3000; i++) logger.info({ i, pad: 'x'.repeat(i % 97) }, 'line');
      setInterval(() => {}, 1000);
    `], { stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    try {
      await new Promise<void>((resolve) => child.stdout.setEncoding('utf8').on('data', (c: string) => {
        out += c;
        if (out.split('\n').length > 3000) resolve();
      }));
      const lines = out.split('\n').filter(Boolean).map((l) => JSON.parse(l) as { i: number });
      assert.deepEqual(lines.map((l) => l.i), Array.from({ length: 3000 }, (_, i) => i));
    } finally {
      child.kill('SIGKILL');
    }
  });

  it('a closed stdout drops lines and says so once on stderr; the process keeps running', async () => {
    const child = spawn(process.execPath, ['--input-type=module', '-e', `
      import { createLogger } from ${LOGGER};
      const logger = createLogger({ format: 'json', level: 'info' });
      process.stdin.once('data', () => {
        for (let i = 0; i < 2000; i++) logger.info({ i }, 'line');
        setTimeout(() => { process.stderr.write('still running'); process.exit(0); }, 250);
      });
    `], { stdio: ['pipe', 'pipe', 'pipe'] });
    let err = '';
    child.stderr.setEncoding('utf8').on('data', (c: string) => { err += c; });
    child.stdout.destroy();
    child.stdin.write('go\n');
    const code = await new Promise((resolve) => child.once('close', resolve));
    assert.equal(code, 0, err);
    assert.match(err, /still running/);
    assert.equal(err.match(/log lines dropped/g)?.length, 1, err);
  });
});

describe('per-module levels (logging.level "warn,mcp=debug")', () => {
  const lines = (filter: string): { module?: string; msg: string }[] => {
    const chunks: string[] = [];
    const parsed = parseLogFilter(filter);
    const root = createLogger({ format: 'json', level: parsed.level ?? 'info', filter: parsed, destination: { write: (line: string) => chunks.push(line) } });
    root.info('root info');
    root.warn('root warn');
    // A module's logger is made from a child too (the runtime hands children around).
    const mcp = moduleLogger(root.child({ backend: 'b' }), 'mcp');
    mcp.debug('mcp debug');
    mcp.child({ session: 's' }).trace('mcp trace');
    moduleLogger(root, 'llm').info('llm info');
    moduleLogger(root, 'xds').warn('xds warn');
    return chunks.join('').split('\n').filter(Boolean).map((l) => JSON.parse(l) as { module?: string; msg: string });
  };
  const CASES: ReadonlyArray<{ name: string; filter: string; want: string[] }> = [
    { name: 'a module below the process level logs its debug lines', filter: 'warn,mcp=debug', want: ['root warn', 'mcp debug', 'xds warn'] },
    { name: 'a module above the process level is quieter', filter: 'info,llm=error,xds=off', want: ['root info', 'root warn'] },
    { name: 'trace reaches a module\'s grandchildren', filter: 'error,mcp=trace', want: ['mcp debug', 'mcp trace'] },
    { name: 'no module entries: every module at the process level', filter: 'info', want: ['root info', 'root warn', 'llm info', 'xds warn'] },
  ];
  for (const c of CASES) it(c.name, () => assert.deepEqual(lines(c.filter).map((l) => l.msg), c.want));
  it('a module logger names its module on each line', () => {
    assert.equal(lines('warn,mcp=debug').find((l) => l.msg === 'mcp debug')?.module, 'mcp');
  });
  it('without a level for it, moduleLogger is the logger itself (nothing added)', () => {
    const root = createLogger({ level: 'info', destination: { write: () => undefined } });
    assert.equal(moduleLogger(root, 'mcp'), root);
  });
});

