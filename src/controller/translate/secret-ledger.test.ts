import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { KubeObject } from '../../api/gateway/object.ts';
import { SecretLedger } from './secret-ledger.ts';

/** A Secret with a plain key and a JSON service-account key (its fields are text-only records). */
const secret: KubeObject = {
  apiVersion: 'v1', kind: 'Secret', metadata: { name: 's', namespace: 'a' },
  stringData: { key: 'Bearer sk-live-0123456789', sa: JSON.stringify({ type: 'service_account', private_key: 'very-secret-private-key-material' }) },
};

/** What a policy read does with Secret data: read entries, derive a value, keep a parsed tree. */
function read(ledger: SecretLedger): { token: string; tree: object } {
  const entries = ledger.entries(secret);
  const token = ledger.record((entries.key as string).slice('Bearer '.length));
  const tree = ledger.recordTree(JSON.parse(entries.sa as string) as object);
  return { token, tree };
}

describe('SecretLedger capture/replay (a memoized read in a later translation)', () => {
  it('a replayed read records what reading again would: values, text-only fields and trees', () => {
    const first = new SecretLedger();
    const { result, recorded } = first.capture(() => read(first));
    assert.ok(recorded, 'the read recorded Secret data');
    const later = new SecretLedger();
    later.replay(recorded);
    assert.deepEqual(later.values(), first.values());
    // The IR holds the kept read's tree (the same object): found by identity, as in the first ledger.
    const config = { routes: { r: { auth: result.tree, token: result.token, plain: 'nothing' } } };
    assert.deepEqual(later.locate(config), first.locate(config));
    assert.deepEqual(later.locate(config), ['/routes/r/auth', '/routes/r/token']);
    assert.ok(later.touches > 0, 'a replay counts as reading Secret data');
  });

  it('the text-only fields of a JSON value read but not kept as a tree are replayed too', () => {
    const first = new SecretLedger();
    const { recorded } = first.capture(() => first.entries(secret));
    const later = new SecretLedger();
    later.replay(recorded as NonNullable<typeof recorded>);
    assert.ok(first.values().includes('very-secret-private-key-material'), 'a JSON field is a text-only record');
    assert.deepEqual(later.values(), first.values());
  });

  it('a read that records nothing gives no record; a nested capture also goes to the outer one', () => {
    const ledger = new SecretLedger();
    assert.equal(ledger.capture(() => 1).recorded, undefined);
    const outer = ledger.capture(() => ledger.capture(() => read(ledger)));
    assert.deepEqual(outer.recorded, outer.result.recorded);
  });
});
