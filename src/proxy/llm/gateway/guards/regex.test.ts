import { test } from 'node:test';
import assert from 'node:assert/strict';
import { builtinDetector, compileDetectors, findsAny, luhnValid, maskText, MAX_REGEX_INPUT_CHARS, regexGuard, type Builtin } from './regex.ts';
import { GuardConfigError } from './compile.ts';
import type { GuardInput } from './types.ts';

const ctx = { phase: 'request' as const, path: 'request[0].regex', rejectStatus: 403, rejectMessage: 'no' };
const input = (...texts: string[]): GuardInput => ({ phase: 'request', segments: texts.map((text) => ({ role: 'user', text })), headers: {}, streaming: false });

/** Each builtin against text it must flag (true positives) and text it must leave alone (false positives). */
const DETECTION: Record<string, { builtin: Builtin; text: string; found: boolean }> = {
  'ssn with dashes': { builtin: 'Ssn', text: 'my ssn is 123-45-6789.', found: true },
  'ssn with spaces': { builtin: 'Ssn', text: 'ssn 123 45 6789', found: true },
  'ssn area 000 is never issued': { builtin: 'Ssn', text: '000-12-3456', found: false },
  'ssn area 666 is never issued': { builtin: 'Ssn', text: '666-12-3456', found: false },
  'ssn area 9xx is never issued': { builtin: 'Ssn', text: '912-12-3456', found: false },
  'ssn serial 0000 is never issued': { builtin: 'Ssn', text: '123-45-0000', found: false },
  'ssn inside a longer number': { builtin: 'Ssn', text: 'ref 9123-45-67890', found: false },
  'visa test number': { builtin: 'CreditCard', text: 'card 4111 1111 1111 1111 exp 12/30', found: true },
  'mastercard with dashes': { builtin: 'CreditCard', text: '5500-0000-0000-0004', found: true },
  'amex 15 digits': { builtin: 'CreditCard', text: '378282246310005', found: true },
  'order number failing luhn': { builtin: 'CreditCard', text: 'order 4111111111111112 shipped', found: false },
  'too short for a card': { builtin: 'CreditCard', text: '411111111111', found: false },
  'us phone with parentheses': { builtin: 'PhoneNumber', text: 'call (555) 123-4567 now', found: true },
  'us phone with dots': { builtin: 'PhoneNumber', text: '555.123.4567', found: true },
  'international phone': { builtin: 'PhoneNumber', text: 'ring +44 207 123 4567', found: true },
  'a year and a count are no phone': { builtin: 'PhoneNumber', text: 'in 2024 we sold 1234 units', found: false },
  'email': { builtin: 'Email', text: 'write to jane.doe+ai@example.co.uk today', found: true },
  'an at sign without a domain': { builtin: 'Email', text: 'meet @ noon, user@localhost', found: false },
  'canadian sin, valid luhn': { builtin: 'CaSin', text: 'SIN 046 454 286', found: true },
  'canadian sin without separators': { builtin: 'CaSin', text: 'sin:046454286', found: true },
  'nine digits failing luhn': { builtin: 'CaSin', text: 'invoice 046 454 287', found: false },
  'sin cannot start with 8': { builtin: 'CaSin', text: '800 000 008', found: false },
};

for (const [name, row] of Object.entries(DETECTION)) {
  test(`regex builtin ${row.builtin}: ${name}`, () => {
    assert.equal(findsAny([builtinDetector(row.builtin)], row.text), row.found);
  });
}

test('luhn: known valid and invalid numbers', () => {
  assert.equal(luhnValid('4111111111111111'), true);
  assert.equal(luhnValid('4111111111111112'), false);
  assert.equal(luhnValid('046454286'), true);
  assert.equal(luhnValid(''), false);
});

const MASKING: Record<string, { spec: Record<string, unknown>; text: string; want: string }> = {
  'each builtin names its kind': {
    spec: { builtins: ['Ssn', 'CreditCard', 'PhoneNumber', 'Email', 'CaSin'] },
    text: 'ssn 123-45-6789, card 4111 1111 1111 1111, phone (555) 123-4567, mail a@b.io, sin 046-454-286',
    want: 'ssn <SSN>, card <CREDIT_CARD>, phone <PHONE_NUMBER>, mail <EMAIL>, sin <CA_SIN>',
  },
  'a custom pattern masks as MASKED': { spec: { matches: ['secret-[a-z]+'] }, text: 'key secret-abc and secret-xyz', want: 'key <MASKED> and <MASKED>' },
  'a match failing its check stays': { spec: { builtins: ['CreditCard'] }, text: 'order 4111111111111112', want: 'order 4111111111111112' },
  'non-ascii text around a match keeps its place': { spec: { builtins: ['Email'] }, text: 'héllo 👋 a@b.io ✓', want: 'héllo 👋 <EMAIL> ✓' },
};

for (const [name, row] of Object.entries(MASKING)) {
  test(`regex mask: ${name}`, () => {
    assert.equal(maskText(compileDetectors(row.spec, 'p'), row.text), row.want);
  });
}

test('regex guard: Reject rejects on any segment, Mask returns every segment', () => {
  const reject = regexGuard({ builtins: ['Ssn'], action: 'Reject' }, ctx);
  assert.deepEqual(reject.check(input('hi', 'ssn 123-45-6789'), new AbortController().signal), { action: 'reject', reason: 'regex' });
  assert.deepEqual(reject.check(input('hi'), new AbortController().signal), { action: 'pass' });
  const mask = regexGuard({ builtins: ['Email'] }, ctx);
  assert.deepEqual(mask.check(input('hi', 'mail a@b.io'), new AbortController().signal), { action: 'mask', segments: ['hi', 'mail <EMAIL>'] });
  assert.deepEqual(mask.check(input('hi'), new AbortController().signal), { action: 'pass' });
});

test('regex guard: text over the bound throws (the runner fails closed)', () => {
  const guard = regexGuard({ builtins: ['Ssn'], action: 'Reject' }, ctx);
  assert.throws(() => guard.check(input('x'.repeat(MAX_REGEX_INPUT_CHARS + 1)), new AbortController().signal), /limit/);
});

test('regex guard: invalid configuration is a GuardConfigError', () => {
  assert.throws(() => regexGuard({ matches: ['(unclosed'] }, ctx), GuardConfigError);
  assert.throws(() => regexGuard({ matches: ['a'.repeat(1025)] }, ctx), GuardConfigError);
  assert.throws(() => regexGuard({ builtins: ['Iban'] }, ctx), GuardConfigError);
  assert.throws(() => regexGuard({}, ctx), GuardConfigError);
});
