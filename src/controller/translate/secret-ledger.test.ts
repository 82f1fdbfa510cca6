import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { KubeObject, ObjectStatus } from '../../api/gateway/object.ts';
import { ScrubbedList, SecretLedger } from './secret-ledger.ts';

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

describe('SecretLedger.recordTree interns trees by content (kept IR results hold an earlier read\'s tree)', () => {
  it('a later ledger reading equal JSON (keys in any order) records and returns the tree an earlier read put in the IR', () => {
    const first = new SecretLedger();
    const held = first.recordTree({ tier: 'gold', quota: 987654321, nested: [{ deep: true }] });
    const later = new SecretLedger();
    const again = later.recordTree({ nested: [{ deep: true }], quota: 987654321, tier: 'gold' });
    assert.equal(again, held, 'the live equal tree, not the newly parsed one');
    // A route kept from the first translation holds `held`: the later ledger locates it (numbers and keys included).
    assert.deepEqual(later.locate({ routes: { r: { metadata: held } } }), ['/routes/r/metadata']);
    const other = later.recordTree({ tier: 'silver' });
    assert.notEqual(other, held);
    assert.deepEqual(other, { tier: 'silver' });
  });
});

describe('SecretLedger.scrubStatuses with a kept list (the incremental translator)', () => {
  const status = (message: string): ObjectStatus => ({ apiVersion: 'v1', kind: 'X', metadata: { name: 'x' }, status: { conditions: [{ type: 'Accepted', status: 'False', reason: 'R', message }] } } as unknown as ObjectStatus);
  const messages = (list: readonly ObjectStatus[]): string[] => list.map((s) => (s.status as { conditions: { message: string }[] }).conditions[0]!.message);

  it('scrubs the statuses of the same list again when the recorded values change, and a changed status at its place', () => {
    const kept = new ScrubbedList();
    const list = [status('token sk-first-0123456789 and sk-second-0123456789'), status('nothing secret')];
    const first = new SecretLedger();
    first.record('sk-first-0123456789');
    assert.deepEqual(messages(first.scrubStatuses(list, kept)), ['token [redacted] and sk-second-0123456789', 'nothing secret']);
    // The next translation recorded another value: the same status objects are scrubbed with it.
    const second = new SecretLedger();
    second.record('sk-second-0123456789');
    assert.deepEqual(messages(second.scrubStatuses(list, kept)), ['token sk-first-0123456789 and [redacted]', 'nothing secret']);
    // One status replaced at its place: scrubbed; the other is the previous result.
    const next = [list[0] as ObjectStatus, status('now sk-second-0123456789')];
    assert.deepEqual(messages(second.scrubStatuses(next, kept)), ['token sk-first-0123456789 and [redacted]', 'now [redacted]']);
  });
});
