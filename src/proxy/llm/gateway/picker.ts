/** Priority groups: the first group first, its providers taken in turn so load spreads evenly. */
import type { AiBackendIR, AiProviderIR } from '../../../ir/ai.ts';

export class ProviderPicker {
  readonly #groups: AiBackendIR['groups'];
  readonly #next: number[];

  constructor(groups: AiBackendIR['groups']) {
    this.#groups = groups;
    this.#next = groups.map(() => 0);
  }

  /**
   * Every provider in the order to try them for one request: group by group, each group's
   * providers rotated by one per request. Callers move on when an attempt fails before anything
   * reached the client.
   */
  order(): AiProviderIR[] {
    const out: AiProviderIR[] = [];
    this.#groups.forEach((group, g) => {
      const n = group.providers.length;
      const start = this.#next[g] % n;
      this.#next[g] = (start + 1) % n;
      for (let i = 0; i < n; i++) out.push(group.providers[(start + i) % n]);
    });
    return out;
  }
}
