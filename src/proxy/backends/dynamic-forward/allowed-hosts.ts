/** The backend's destination allow list: exact names, `*.suffix` (names strictly below suffix), or `*`. */
export function hostAllowed(host: string, allowed: readonly string[]): boolean {
  for (const entry of allowed) {
    if (entry === '*' || entry === host) return true;
    if (entry.startsWith('*.') && host.length > entry.length - 1 && host.endsWith(entry.slice(1))) return true;
  }
  return false;
}
