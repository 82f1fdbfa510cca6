import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createLogger, scrubLogLine, setLoggedSecrets } from './logger.ts';

/** What a logger made by createLogger writes, captured from stdout. */
function captured(format: 'json' | 'text', log: (logger: ReturnType<typeof createLogger>) => void): string {
  const chunks: string[] = [];
  const write = process.stdout.write.bind(process.stdout);
  process.stdout.write = ((chunk: string) => { chunks.push(String(chunk)); return true; }) as typeof process.stdout.write;
  try {
    log(createLogger({ format, level: 'info' }));
  } finally {
    process.stdout.write = write;
  }
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
