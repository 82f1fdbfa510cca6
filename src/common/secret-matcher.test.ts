import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { SecretMatcher } from './secret-matcher.ts';

describe('SecretMatcher', () => {
  const matcher = new SecretMatcher(['sk-live-0123456789', 'sk-live-0123456789-longer', 'pin1', '']);
  const cases: { name: string; text: string; secret: boolean; scrubbed: string }[] = [
    { name: 'the value itself', text: 'sk-live-0123456789', secret: true, scrubbed: '[redacted]' },
    { name: 'inside text', text: 'auth failed for Bearer sk-live-0123456789 (401)', secret: true, scrubbed: 'auth failed for Bearer [redacted] (401)' },
    { name: 'the longest value wins at a position', text: 'x sk-live-0123456789-longer y', secret: true, scrubbed: 'x [redacted] y' },
    { name: 'twice', text: 'sk-live-0123456789,sk-live-0123456789', secret: true, scrubbed: '[redacted],[redacted]' },
    { name: 'a short value only as a whole string', text: 'pin1', secret: true, scrubbed: '[redacted]' },
    { name: 'a short value inside text is left (too common)', text: 'spin1', secret: false, scrubbed: 'spin1' },
    { name: 'unrelated text', text: 'sk-live-01234', secret: false, scrubbed: 'sk-live-01234' },
  ];
  for (const c of cases) {
    it(c.name, () => {
      assert.equal(matcher.isSecret(c.text), c.secret);
      assert.equal(matcher.scrub(c.text), c.scrubbed);
    });
  }

  it('stays linear with many values and long text', () => {
    const many = new SecretMatcher(Array.from({ length: 20_000 }, (_, i) => `key-${i.toString().padStart(8, '0')}-abcdef`));
    const text = 'a'.repeat(1_000_000) + 'key-00019999-abcdef';
    const started = performance.now();
    assert.equal(many.scrub(text).endsWith('[redacted]'), true);
    assert.ok(performance.now() - started < 2000);
  });
});
