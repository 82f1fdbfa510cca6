/**
 * What the proxies said about each Gateway's config, folded into the Gateway's status:
 * `Programmed` means a proxy serves it, not just that it translated.
 *
 * - a proxy that refused (NACKed) the config it was sent keeps serving its last good one; until
 *   it acknowledges again the Gateway says `Programmed=False, reason Invalid` with the proxy's
 *   error, bounded to MAX_ERROR_CHARS;
 * - with no proxy connected that acknowledged a config for it, `Programmed=False, reason Pending`;
 * - otherwise the translator's condition stands. A translator `Programmed=False` is never
 *   overridden: a config that did not translate is not made valid by a proxy's ACK.
 */
import type { Condition, ObjectStatus } from '../../api/gateway/object.ts';

export interface GatewayKey {
  readonly namespace: string;
  readonly name: string;
}

/** A NACK quotes the proxy's errors; the status keeps the start of it (a Condition message is capped at 32768). */
export const MAX_ERROR_CHARS = 1024;
/** Gateway API caps a condition message at 32768 characters. */
const MAX_MESSAGE_CHARS = 32_768;

interface ProxyState {
  acked: boolean;
  error: string | undefined;
}

export class ProxyFeedback {
  /** gateway id → proxy id → what it last said. */
  readonly #gateways = new Map<string, Map<string, ProxyState>>();
  readonly #onChange: () => void;
  /** Per translated Gateway status: the overlaid copy made for it and the replacement condition it carries. */
  readonly #made = new WeakMap<ObjectStatus, { readonly key: string; readonly output: ObjectStatus }>();

  /** `onChange` runs when a Gateway's status may differ now (the status writer recomputes). */
  constructor(onChange: () => void) {
    this.#onChange = onChange;
  }

  ack(gateway: GatewayKey, proxyId: string): void {
    this.#set(gateway, proxyId, { acked: true, error: undefined });
  }

  nack(gateway: GatewayKey, proxyId: string, error: string): void {
    const previous = this.#gateways.get(id(gateway))?.get(proxyId);
    this.#set(gateway, proxyId, { acked: previous?.acked ?? false, error: error.slice(0, MAX_ERROR_CHARS) });
  }

  disconnect(gateway: GatewayKey, proxyId: string): void {
    const proxies = this.#gateways.get(id(gateway));
    if (!proxies?.delete(proxyId)) return;
    if (proxies.size === 0) this.#gateways.delete(id(gateway));
    this.#onChange();
  }

  /**
   * The statuses with each Gateway's `Programmed` condition reflecting its proxies. Runs on every
   * status update (every edit, over all 11k statuses at bench scale): the array is handed back as
   * it is when no Gateway changes, and a Gateway given the same condition as last time gets the
   * same object back — the status writers skip unchanged status objects by identity, so a new
   * copy per update would be stamped and compared again on every edit.
   */
  overlay(statuses: readonly ObjectStatus[]): readonly ObjectStatus[] {
    let out: ObjectStatus[] | undefined;
    for (let i = 0; i < statuses.length; i++) {
      const object = statuses[i] as ObjectStatus;
      if (object.kind !== 'Gateway' || !object.apiVersion.startsWith('gateway.networking.k8s.io/')) continue;
      const conditions = object.status.conditions as Condition[] | undefined;
      const programmed = conditions?.find((c) => c.type === 'Programmed');
      if (!conditions || programmed?.status !== 'True') continue;
      const replacement = this.#programmed(object.metadata.namespace ?? 'default', object.metadata.name, programmed);
      if (!replacement) continue;
      out ??= statuses.slice();
      out[i] = this.#replaced(object, conditions, programmed, replacement);
    }
    return out ?? statuses;
  }

  /** `object` with `replacement` for its `programmed` condition: the object made last time when both are the same. */
  #replaced(object: ObjectStatus, conditions: readonly Condition[], programmed: Condition, replacement: Condition): ObjectStatus {
    const key = JSON.stringify(replacement);
    const made = this.#made.get(object);
    if (made?.key === key) return made.output;
    const output = { ...object, status: { ...object.status, conditions: conditions.map((c) => (c === programmed ? replacement : c)) } };
    this.#made.set(object, { key, output });
    return output;
  }

  #programmed(namespace: string, name: string, translated: Condition): Condition | undefined {
    const proxies = [...(this.#gateways.get(`${namespace}/${name}`) ?? new Map<string, ProxyState>())];
    const refused = proxies.filter(([, p]) => p.error !== undefined);
    const base = { type: 'Programmed', status: 'False' as const, ...(translated.observedGeneration !== undefined ? { observedGeneration: translated.observedGeneration } : {}) };
    if (refused.length > 0) {
      const message = refused.map(([proxyId, p]) => `proxy ${proxyId} refused the config and serves its last good one: ${p.error!}`).join('; ');
      return { ...base, reason: 'Invalid', message: message.slice(0, MAX_MESSAGE_CHARS) };
    }
    if (!proxies.some(([, p]) => p.acked)) return { ...base, reason: 'Pending', message: 'waiting for a proxy of this Gateway to acknowledge its config' };
    return undefined;
  }

  #set(gateway: GatewayKey, proxyId: string, state: ProxyState): void {
    let proxies = this.#gateways.get(id(gateway));
    if (!proxies) {
      proxies = new Map();
      this.#gateways.set(id(gateway), proxies);
    }
    const previous = proxies.get(proxyId);
    proxies.set(proxyId, state);
    if (previous?.acked !== state.acked || previous?.error !== state.error) this.#onChange();
  }
}

function id(gateway: GatewayKey): string {
  return `${gateway.namespace}/${gateway.name}`;
}
