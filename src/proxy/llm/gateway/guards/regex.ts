/**
 * The `regex` prompt guard: RE2 `matches` (re2js, linear time) and the builtin detectors `Ssn`,
 * `CreditCard`, `PhoneNumber`, `Email`, `CaSin`. `Mask` replaces each match with a marker naming
 * what was found (`<SSN>`, `<CREDIT_CARD>`, `<PHONE_NUMBER>`, `<EMAIL>`, `<CA_SIN>`, `<MASKED>`
 * for a `matches` pattern); `Reject` answers with the entry's `response`. Numbers whose digits can
 * be checked are (Luhn for cards and SINs, reserved ranges for SSNs), so order numbers and the
 * like pass. Bounds (docs/security.md): a pattern is at most 1024 characters, a check at most
 * MAX_REGEX_INPUT_CHARS of text — past that the guard fails, and a regex guard fails closed.
 */
import { RE2JS } from 're2js';
import { GuardConfigError, registerGuardKind, type GuardSpecContext } from './compile.ts';
import type { CompiledGuard, GuardInput, GuardVerdict } from './types.ts';

export const MAX_PATTERN_CHARS = 1024;
/** Text one check may scan (all segments together): a bigger request or answer is refused, not scanned in part. */
export const MAX_REGEX_INPUT_CHARS = 1024 * 1024;

export const BUILTINS = ['Ssn', 'CreditCard', 'PhoneNumber', 'Email', 'CaSin'] as const;
export type Builtin = (typeof BUILTINS)[number];

/** One thing the guard looks for: a pattern, an optional check on each match, the mask marker. */
export interface Detector {
  readonly marker: string;
  readonly re: RE2JS;
  /** False: the match is not what the detector looks for (checksum or reserved range), leave it. */
  readonly accept?: (match: string) => boolean;
}

const digitsOf = (s: string): string => s.replace(/\D/g, '');

/** The Luhn checksum (ISO/IEC 7812) over a string of digits. */
export function luhnValid(digits: string): boolean {
  let sum = 0;
  for (let i = 0; i < digits.length; i++) {
    let d = digits.charCodeAt(digits.length - 1 - i) - 48;
    if (i % 2 === 1) {
      d *= 2;
      if (d > 9) d -= 9;
    }
    sum += d;
  }
  return digits.length > 0 && sum % 10 === 0;
}

/** Number patterns start and end at a word boundary (`\b`), so a piece of a longer number is not taken for one. */
const BUILTIN_DETECTORS: Record<Builtin, Detector> = {
  // US SSN, written 3-2-4 with dashes or spaces; area 000, 666 and 900-999, group 00 and serial 0000 are never issued.
  Ssn: {
    marker: '<SSN>',
    re: RE2JS.compile('\\b\\d{3}[- ]\\d{2}[- ]\\d{4}\\b'),
    accept: (m) => {
      const d = digitsOf(m);
      const area = d.slice(0, 3);
      return area !== '000' && area !== '666' && area[0] !== '9' && d.slice(3, 5) !== '00' && d.slice(5) !== '0000';
    },
  },
  // 13 to 19 digits, optionally grouped by single spaces or dashes, passing the Luhn check.
  CreditCard: {
    marker: '<CREDIT_CARD>',
    re: RE2JS.compile('\\b\\d(?:[- ]?\\d){12,18}\\b'),
    accept: (m) => luhnValid(digitsOf(m)),
  },
  // North American numbers (optional +1, area code in parentheses or not, separators . - or space) and
  // international ones written with a leading + and country code.
  PhoneNumber: {
    marker: '<PHONE_NUMBER>',
    re: RE2JS.compile('(?:\\+\\d{1,3}[ .-]?)?(?:\\(\\d{3}\\)|\\b\\d{3})[ .-]?\\d{3}[ .-]?\\d{4}\\b'),
  },
  Email: {
    marker: '<EMAIL>',
    re: RE2JS.compile('[A-Za-z0-9._%+-]+@[A-Za-z0-9-]+(?:\\.[A-Za-z0-9-]+)*\\.[A-Za-z]{2,}'),
  },
  // Canadian SIN, 3-3-3 digits (space, dash or none), Luhn-valid; 8 starts business numbers, not SINs.
  CaSin: {
    marker: '<CA_SIN>',
    re: RE2JS.compile('\\b\\d{3}[- ]?\\d{3}[- ]?\\d{3}\\b'),
    accept: (m) => {
      const d = digitsOf(m);
      return d[0] !== '8' && luhnValid(d);
    },
  },
};

/** Card numbers are masked before phone numbers: a card's digit groups would otherwise look like one. */
const BUILTIN_ORDER: readonly Builtin[] = ['CreditCard', 'CaSin', 'Ssn', 'PhoneNumber', 'Email'];

export function builtinDetector(name: Builtin): Detector {
  return BUILTIN_DETECTORS[name];
}

/** The detectors of a `regex` block: builtins first (in BUILTIN_ORDER), then `matches` in order. */
export function compileDetectors(spec: Readonly<Record<string, unknown>>, path: string): Detector[] {
  const builtins = Array.isArray(spec.builtins) ? spec.builtins : [];
  const matches = Array.isArray(spec.matches) ? spec.matches : [];
  for (const b of builtins) if (!(BUILTINS as readonly unknown[]).includes(b)) throw new GuardConfigError(`promptGuard.${path}.builtins: unknown builtin ${JSON.stringify(b)}`);
  const out: Detector[] = BUILTIN_ORDER.filter((b) => builtins.includes(b)).map((b) => BUILTIN_DETECTORS[b]);
  matches.forEach((pattern: unknown, i) => {
    if (typeof pattern !== 'string' || pattern === '' || pattern.length > MAX_PATTERN_CHARS) {
      throw new GuardConfigError(`promptGuard.${path}.matches[${i}]: a pattern is 1 to ${MAX_PATTERN_CHARS} characters`);
    }
    try {
      out.push({ marker: '<MASKED>', re: RE2JS.compile(pattern) });
    } catch (err) {
      throw new GuardConfigError(`promptGuard.${path}.matches[${i}]: invalid RE2 pattern: ${(err as Error).message}`);
    }
  });
  if (out.length === 0) throw new GuardConfigError(`promptGuard.${path}: set matches or builtins`);
  return out;
}

/** True when any detector finds an accepted match in the text. */
export function findsAny(detectors: readonly Detector[], text: string): boolean {
  for (const d of detectors) {
    const m = d.re.matcher(text);
    while (m.find()) {
      const found = m.group() ?? '';
      if (found === '') continue;
      if (!d.accept || d.accept(found)) return true;
    }
  }
  return false;
}

/** The text with every accepted match replaced by its detector's marker, detector by detector. */
export function maskText(detectors: readonly Detector[], text: string): string {
  let out = text;
  for (const d of detectors) {
    const m = d.re.matcher(out);
    let result = '';
    let at = 0;
    while (m.find()) {
      const found = m.group() ?? '';
      if (found === '' || (d.accept && !d.accept(found))) continue;
      result += out.slice(at, m.start()) + d.marker;
      at = m.end();
    }
    if (at > 0) out = result + out.slice(at);
  }
  return out;
}

export function regexGuard(spec: Readonly<Record<string, unknown>>, ctx: GuardSpecContext): CompiledGuard {
  const detectors = compileDetectors(spec, ctx.path);
  const reject = spec.action === 'Reject';
  return {
    kind: 'regex',
    rejectStatus: ctx.rejectStatus,
    rejectMessage: ctx.rejectMessage,
    failOpen: false,
    check(input: GuardInput): GuardVerdict {
      let size = 0;
      for (const s of input.segments) size += s.text.length;
      // Thrown, so the runner fails closed: a regex guard has no failureMode.
      if (size > MAX_REGEX_INPUT_CHARS) throw new Error(`text over the ${MAX_REGEX_INPUT_CHARS}-character regex guard limit`);
      if (reject) return input.segments.some((s) => findsAny(detectors, s.text)) ? { action: 'reject', reason: 'regex' } : { action: 'pass' };
      const masked = input.segments.map((s) => maskText(detectors, s.text));
      return masked.some((t, i) => t !== input.segments[i]?.text) ? { action: 'mask', segments: masked } : { action: 'pass' };
    },
  };
}

registerGuardKind('regex', regexGuard);
