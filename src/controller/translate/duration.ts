/**
 * Gateway API durations (GEP-2257): 1 to 4 groups of 1..5 digits followed by h, m, s or ms,
 * e.g. `10s`, `1m30s`, `500ms`. Returns milliseconds, or null when the string is not valid.
 */
const DURATION = /^(?:\d{1,5}(?:ms|h|m|s)){1,4}$/;
const PART = /(\d{1,5})(ms|h|m|s)/g;
const UNIT_MS: Record<string, number> = { h: 3_600_000, m: 60_000, s: 1000, ms: 1 };

export function parseDuration(text: string): number | null {
  if (!DURATION.test(text)) return null;
  let total = 0;
  for (const [, digits, unit] of text.matchAll(PART)) total += Number(digits) * UNIT_MS[unit];
  return total;
}
