import type { ConfigLifecycle } from '../policies/step.ts';

/**
 * The resources of one compiled config (ext_authz / ext_proc / rate-limit clients and whatever
 * else a step holds) and the requests still using them. After a swap the runtime retires the old
 * config: its resources are released once the last request that entered a resource-holding
 * policy has ended, or when the drain period runs out, whichever comes first. Clients lease their
 * connections from the runtime's SharedConnections, so releasing the old config's clients closes
 * only connections the new config does not use.
 */
export class CompiledLifecycle implements ConfigLifecycle {
  #active = 0;
  #closers: (() => void)[] = [];
  #idle: (() => void) | undefined;
  #retired = false;

  readonly enter = (): void => {
    this.#active++;
  };

  readonly leave = (): void => {
    if (this.#active > 0 && --this.#active === 0) this.#idle?.();
  };

  onRetire(close: () => void): void {
    if (this.#retired) close();
    else this.#closers.push(close);
  }

  /** Requests inside a resource-holding policy now (tests, debugging). */
  get active(): number {
    return this.#active;
  }

  /** True when nothing needs closing: retiring is then free. */
  get empty(): boolean {
    return this.#closers.length === 0;
  }

  /** Stops waiting for requests in flight: a retirement under way closes right away. */
  hurry(): void {
    this.#idle?.();
  }

  /**
   * Waits for the requests in flight (at most `maxWaitMs`), then closes every resource. Errors of
   * one closer are reported through `onError` and do not stop the others.
   */
  async retire(maxWaitMs: number, onError: (err: unknown) => void = () => undefined): Promise<void> {
    if (this.#retired) return;
    this.#retired = true;
    if (this.#closers.length > 0 && this.#active > 0) {
      let timer: NodeJS.Timeout | undefined;
      await new Promise<void>((resolve) => {
        this.#idle = resolve;
        timer = setTimeout(resolve, maxWaitMs);
      });
      clearTimeout(timer);
      this.#idle = undefined;
    }
    for (const close of this.#closers.splice(0)) {
      try {
        close();
      } catch (err) {
        onError(err);
      }
    }
  }
}
