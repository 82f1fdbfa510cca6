import type { Bind } from '../ir/types.ts';

/**
 * What the config thread sends of each translation's binds: each bind, or null when it equals the
 * one sent at its index last time. A route edit rarely changes a bind (attachments name routes,
 * not their content), and a kept bind lets the serving thread keep the object and the proxy its
 * listeners' route tables. The translator keeps an unchanged bind as the same object (then no
 * JSON is made); a new object is compared as JSON.
 */
export class BindSender {
  /** Each bind as last sent (the object and its JSON), by index. */
  #sent: { readonly bind: Bind; readonly json: string }[] = [];

  /** `full`: the receiver starts over (a full config), so every bind is sent. */
  send(binds: readonly Bind[], full: boolean): (Bind | null)[] {
    const previous = full ? [] : this.#sent;
    const out: (Bind | null)[] = [];
    this.#sent = binds.map((bind, i) => {
      const before = previous[i];
      if (before?.bind === bind) {
        out.push(null);
        return before;
      }
      const json = JSON.stringify(bind);
      out.push(before?.json === json ? null : bind);
      return { bind, json };
    });
    return out;
  }

  /** Forget what was sent: the next send() sends every bind. */
  reset(): void {
    this.#sent = [];
  }
}
