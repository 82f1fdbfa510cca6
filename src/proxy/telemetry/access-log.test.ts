import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createLogger, setLoggedSecrets, type Logger } from '../../common/logger.ts';
import { parseLogFilter } from '../../common/log-filter.ts';
import { accessLog, type AccessLogRecord } from './access-log.ts';

/** A JSON logger writing into an array, as `switchboard run` makes it (createLogger). */
function capture(level = 'info'): { logger: Logger; lines: string[] } {
  const lines: string[] = [];
  return { logger: createLogger({ level, format: 'json', destination: { write: (line: string) => lines.push(line) } }), lines };
}

const base: AccessLogRecord = { method: 'GET', path: '/api/items', status: 200, durationMs: 0.4, route: 'default/bench', backend: 'default/upstream:8080', bytes: 1234 };

/** Lines differ only in their time (two clock reads): compare everything else byte for byte. */
const timeless = (line: string): string => line.replace(/"time":\d+/, '"time":0');

describe('accessLog: the pre-serialized line is the line pino writes', () => {
  const rows: { name: string; record: AccessLogRecord }[] = [
    { name: 'plain ASCII', record: base },
    { name: 'quote and backslash in the path', record: { ...base, path: '/a"b\\c' } },
    { name: 'control characters', record: { ...base, path: '/a\u0001\tb\nc\u001f' } },
    { name: 'non-ASCII letters and an emoji', record: { ...base, path: '/grüße/😀', route: 'ns/ルート' } },
    { name: 'DEL and U+2028', record: { ...base, path: '/\u007f\u2028' } },
    { name: 'empty strings (no route matched)', record: { ...base, method: '', path: '', route: '', backend: '' } },
    { name: 'a non-finite duration', record: { ...base, durationMs: Number.NaN } },
    { name: 'infinite bytes', record: { ...base, bytes: Number.POSITIVE_INFINITY } },
    { name: 'negative zero and fractions', record: { ...base, durationMs: -0, bytes: 0, status: 599 } },
    { name: 'a large number', record: { ...base, durationMs: 1e21, bytes: 2 ** 53 } },
  ];
  for (const { name, record } of rows) {
    it(name, () => {
      const { logger, lines } = capture();
      accessLog(logger, record);
      logger.info(record, 'request');
      assert.equal(lines.length, 2);
      assert.equal(timeless(lines[0] as string), timeless(lines[1] as string));
      assert.deepEqual({ ...JSON.parse(lines[0] as string), time: 0 }, { ...JSON.parse(lines[1] as string), time: 0 });
    });
  }

  it("a JSON logger's line does not go through pino's info (the serialisation this skips)", () => {
    const { logger, lines } = capture();
    logger.info = () => assert.fail('pino info called');
    accessLog(logger, base);
    assert.equal(lines.length, 1);
  });

  it('a lone surrogate half is escaped (pino writes it raw, which UTF-8 output turns into U+FFFD)', () => {
    const { logger, lines } = capture();
    const record = { ...base, path: '/x\ud800y' };
    accessLog(logger, record);
    assert.match(lines[0] as string, /"path":"\/x\\ud800y"/);
    assert.equal(JSON.parse(Buffer.from(lines[0] as string, 'utf8').toString('utf8')).path, record.path);
  });

  it("a child logger's bindings come before the fields, as pino puts them", () => {
    const { logger, lines } = capture();
    const child = logger.child({ worker: 2, gateway: 'default/"gw"' });
    accessLog(child, base);
    child.info(base, 'request');
    assert.equal(timeless(lines[0] as string), timeless(lines[1] as string));
    assert.match(lines[0] as string, /"worker":2,"gateway":"default\/\\"gw\\"","method":"GET"/);
  });

  it('is scrubbed of secret values like every line', () => {
    const { logger, lines } = capture();
    setLoggedSecrets(['sk-very-secret']);
    try {
      accessLog(logger, { ...base, path: '/v1/sk-very-secret/x' });
    } finally {
      setLoggedSecrets([]);
    }
    assert.equal(lines.length, 1);
    assert.doesNotMatch(lines[0] as string, /sk-very-secret/);
    assert.match(lines[0] as string, /\[redacted\]/);
  });

  it('writes nothing when info is off, for the logger or its module', () => {
    const quiet = capture('warn');
    accessLog(quiet.logger, base);
    assert.deepEqual(quiet.lines, []);
    const lines: string[] = [];
    const filter = parseLogFilter('info,forward=error');
    const root = createLogger({ format: 'json', level: 'info', filter, destination: { write: (line: string) => lines.push(line) } });
    accessLog(root.child({ module: 'forward' }, { level: 'error' }), base);
    assert.deepEqual(lines, []);
    accessLog(root, base);
    assert.equal(lines.length, 1);
  });

  it('a text logger gets the record through pino (rendered for a person)', () => {
    const lines: string[] = [];
    const logger = createLogger({ format: 'text', level: 'info', textOnPipes: true, destination: { write: (line: string) => lines.push(line) } });
    accessLog(logger, base);
    assert.equal(lines.length, 1);
    assert.match(lines[0] as string, /INFO {2}request method=GET path=\/api\/items status=200/);
  });
});
