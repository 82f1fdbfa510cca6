/**
 * A dynamic forward proxy backend (ProxyBackend `spec.dynamicForwardProxy`): each request goes to
 * the destination its Host (or absolute-form target) names, within the destinations the backend's
 * access control allows; the proxy resolves the name and checks every address it gets.
 */

/** Address classes refused unless listed in `allowAddressClasses`. */
export type ForwardAddressClass = 'loopback' | 'linkLocal' | 'metadata' | 'unspecified';

export interface DynamicForwardIR {
  /**
   * Destination names the proxy may reach: an exact name, `*.suffix` (any name below suffix), or
   * `*` (any name, written on purpose). Lower case; never empty (the translator refuses it).
   */
  readonly allowedHosts: readonly string[];
  readonly allowAddressClasses: readonly ForwardAddressClass[];
}
