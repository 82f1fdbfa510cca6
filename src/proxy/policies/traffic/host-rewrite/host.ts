/**
 * The Host header a hostRewrite mode sends: `Auto` the destination's authority, `None` the one
 * the client sent. A URLRewrite hostname on the route wins over both (SPEC.md: hostRewrite is
 * ignored then), so the caller leaves Host alone in that case.
 */
export function rewrittenHost(mode: 'Auto' | 'None', destination: string, clientAuthority: string | undefined): string | undefined {
  return mode === 'Auto' ? destination : clientAuthority;
}
