/**
 * Priority groups: the first group first; inside a group, the provider a request tries first.
 *
 * - Health-weighted (the default, with a ProviderHealth): power of two choices — two providers of
 *   the group not evicted, drawn at random, and the one with the lower cost (provider-health.ts:
 *   latency, attempts in flight, lost score) goes first; the group's other available providers
 *   follow by cost. Evicted providers go after every group's available ones (a group whose
 *   providers are all evicted passes the request to the next group), so they are used only when
 *   everything else failed or is evicted — SPEC.md: when all are evicted, evicted ones are used.
 * - Rotation (no ProviderHealth): each group's providers taken in turn, one step per request.
 */
import type { AiBackendIR, AiProviderIR } from '../../../ir/ai.ts';
import type { ProviderHealth } from './provider-health.ts';

export type ProviderChoice = 'health' | 'rotation';

/** Two costs closer than this (relative) are a tie in the power-of-two-choices draw. */
const TIE_TOLERANCE = 0.05;

export class ProviderPicker {
  readonly #groups: AiBackendIR['groups'];
  readonly #next: number[];
  readonly #health: ProviderHealth | undefined;
  readonly #random: () => number;
  /** Each group's providers' indexes in the ProviderHealth, computed once. */
  readonly #indexes: number[][];

  constructor(groups: AiBackendIR['groups'], health?: ProviderHealth, random: () => number = Math.random) {
    this.#groups = groups;
    this.#next = groups.map(() => 0);
    this.#health = health;
    this.#random = random;
    this.#indexes = health ? groups.map((g) => g.providers.map((p) => health.indexOf(p.name))) : [];
  }

  /**
   * Every provider in the order to try them for one request. Callers move on when an attempt
   * fails before anything reached the client.
   */
  order(): AiProviderIR[] {
    return this.#health ? this.#weighted(this.#health) : this.#rotated();
  }

  #rotated(): AiProviderIR[] {
    const out: AiProviderIR[] = [];
    this.#groups.forEach((group, g) => {
      const n = group.providers.length;
      const start = this.#next[g] % n;
      this.#next[g] = (start + 1) % n;
      for (let i = 0; i < n; i++) out.push(group.providers[(start + i) % n]);
    });
    return out;
  }

  #weighted(health: ProviderHealth): AiProviderIR[] {
    const out: AiProviderIR[] = [];
    let evicted: { provider: AiProviderIR; group: number; until: number }[] | undefined;
    const now = health.now();
    for (let g = 0; g < this.#groups.length; g++) {
      const providers = this.#groups[g].providers;
      const indexes = this.#indexes[g];
      // The common case, one provider in the group: no ranking at all.
      if (providers.length === 1) {
        if (health.available(indexes[0])) out.push(providers[0]);
        else (evicted ??= []).push({ provider: providers[0], group: g, until: health.evictedUntil(indexes[0]) });
        continue;
      }
      const ranked: { provider: AiProviderIR; cost: number }[] = [];
      for (let p = 0; p < providers.length; p++) {
        if (health.available(indexes[p])) ranked.push({ provider: providers[p], cost: health.cost(indexes[p], now) });
        else (evicted ??= []).push({ provider: providers[p], group: g, until: health.evictedUntil(indexes[p]) });
      }
      if (ranked.length === 0) continue;
      const firstAt = this.#twoChoices(ranked);
      out.push(ranked[firstAt].provider);
      ranked.splice(firstAt, 1);
      ranked.sort((a, b) => a.cost - b.cost);
      for (const r of ranked) out.push(r.provider);
    }
    // Last resort, in priority order, each group's soonest back first.
    if (evicted) for (const e of evicted.sort((a, b) => a.group - b.group || a.until - b.until)) out.push(e.provider);
    return out;
  }

  /**
   * Power of two choices: two distinct candidates at random, the cheaper one. Costs within
   * TIE_TOLERANCE count as a tie, which goes to the first drawn (at random): measured latencies
   * jitter, and a provider whose lost score has all but recovered must get its share again.
   */
  #twoChoices(ranked: readonly { cost: number }[]): number {
    const n = ranked.length;
    if (n === 1) return 0;
    const a = Math.floor(this.#random() * n);
    const b = (a + 1 + Math.floor(this.#random() * (n - 1))) % n;
    return ranked[b].cost * (1 + TIE_TOLERANCE) < ranked[a].cost ? b : a;
  }
}
