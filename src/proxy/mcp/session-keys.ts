import type { Logger } from '../../common/logger.ts';
import type { ProxyConfig } from '../../ir/types.ts';
import { configuredSessionKey, randomSessionKey } from './session-codec.ts';

/**
 * The MCP session keys of the Gateways a proxy serves (`Listener.sessionKey`, from the
 * controller-managed Secret `<gateway>-session-key`), by `<namespace>/<name>` as request labels
 * name a gateway. One per runtime, replaced on each config swap, read per MCP request; MCP
 * handlers outlive swaps while their backend is unchanged, so they look keys up here rather than
 * keep one.
 */
export class GatewaySessionKeys {
  #keys: ReadonlyMap<string, Buffer> = new Map();

  /** Takes the keys of `config`'s listeners; a gateway that kept its key keeps the same Buffer. */
  update(config: ProxyConfig): void {
    const next = new Map<string, Buffer>();
    for (const bind of config.binds) {
      for (const listener of bind.listeners) {
        if (listener.sessionKey === undefined) continue;
        const id = `${listener.gateway.namespace}/${listener.gateway.name}`;
        const known = this.#keys.get(id);
        next.set(id, known !== undefined && known.toString('hex') === listener.sessionKey ? known : Buffer.from(listener.sessionKey, 'hex'));
      }
    }
    this.#keys = next;
  }

  get(gateway: string): Buffer | undefined {
    return this.#keys.get(gateway);
  }
}

/**
 * Which key seals and opens the sessions of a request. Precedence (SPEC.md, Parameters `env`):
 * an explicit key (tests), else env `SESSION_KEY`, else the key of the Gateway the request came
 * through, else a random per-process key, made (and warned about) the first time it is needed.
 */
export class SessionKeySelector {
  readonly #fixed: Buffer | undefined;
  readonly #gateways: GatewaySessionKeys | undefined;
  readonly #logger: Logger;
  #random: Buffer | undefined;

  /** Throws on a malformed explicit key or SESSION_KEY (a configuration error). */
  constructor(explicit: Buffer | undefined, env: NodeJS.ProcessEnv, gateways: GatewaySessionKeys | undefined, logger: Logger) {
    this.#fixed = configuredSessionKey(explicit, env);
    this.#gateways = gateways;
    this.#logger = logger;
  }

  forGateway(gateway: string | undefined): Buffer {
    if (this.#fixed !== undefined) return this.#fixed;
    const own = gateway === undefined ? undefined : this.#gateways?.get(gateway);
    return own ?? (this.#random ??= randomSessionKey(this.#logger));
  }
}
