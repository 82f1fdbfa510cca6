/**
 * Defensive readers. Objects arrive from YAML files or the API server and a user's mistake must
 * become a status condition, never a throw, so nested values are checked before use.
 */

export type Dict = Record<string, unknown>;

export function isDict(value: unknown): value is Dict {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The object entries of an array field; anything else reads as empty. */
export function listOf<T>(value: unknown): T[] {
  return Array.isArray(value) ? (value.filter(isDict) as T[]) : [];
}

export function stringOr<T>(value: unknown, fallback: T): string | T {
  return typeof value === 'string' ? value : fallback;
}

export function isPort(value: unknown): value is number {
  return Number.isInteger(value) && (value as number) >= 1 && (value as number) <= 65535;
}

export function stringRecord(value: unknown): Record<string, string> {
  if (!isDict(value)) return {};
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(value)) if (typeof v === 'string') out[k] = v;
  return out;
}

/** Group of an apiVersion: `gateway.networking.k8s.io/v1` → `gateway.networking.k8s.io`, `v1` → ``. */
export function groupOf(apiVersion: unknown): string {
  if (typeof apiVersion !== 'string') return '';
  const slash = apiVersion.indexOf('/');
  return slash < 0 ? '' : apiVersion.slice(0, slash);
}

/** isDict for a value already typed as an optional object: narrows to that type instead of Dict. */
export function isPresent<T extends object>(value: T | null | undefined): value is T {
  return isDict(value);
}
