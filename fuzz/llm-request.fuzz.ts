/**
 * Fuzz target: attacker bytes as the body of each AI route type, planned the way the gateway
 * plans them (src/proxy/llm/translate/plan.ts: JSON depth check, parse, translation to the provider's
 * format, count_tokens answered locally), for an identity provider (OpenAI-style) and a
 * translating one (Anthropic). Every input must give a forward plan or a gateway-made answer
 * with a 4xx status (or 200 for a local token count / 501 for a route the provider lacks) — never
 * an exception, never a long run. The translated upstream body must itself be JSON.
 */
import { planRequest } from '../src/proxy/llm/translate/plan.ts';
import type { RouteType } from '../src/proxy/llm/translate/config.ts';
import type { TranslationContext } from '../src/proxy/llm/translate/context.ts';

const ROUTES: readonly RouteType[] = ['Completions', 'Messages', 'Responses', 'Embeddings', 'TokenCount'];
const PROVIDERS = [{ providerA: {} }, { providerD: {} }] as const;
/** Far above what a 2 MiB body takes to plan (tens of milliseconds); a super-linear step shows. */
export const MAX_PLAN_MS = 2_000;
const CONTEXT: TranslationContext = { newId: (prefix: string) => `${prefix}_fuzz`, now: () => 1_700_000_000 };

export function fuzz(data: Buffer): void {
  for (const provider of PROVIDERS) {
    for (const routeType of ROUTES) {
      const t0 = performance.now();
      const plan = planRequest({ routeType, provider: provider as never, body: data, context: CONTEXT });
      const ms = performance.now() - t0;
      if (ms > MAX_PLAN_MS) throw new Error(`planning ${routeType} took ${ms.toFixed(0)} ms for ${data.length} bytes`);
      if (plan.kind === 'respond') {
        const s = plan.response.status;
        const fine = (s >= 400 && s < 500) || s === 501 || (s === 200 && routeType === 'TokenCount');
        if (!fine) throw new Error(`${routeType}: gateway answered ${s}: ${Buffer.from(plan.response.body).toString('utf8').slice(0, 200)}`);
        continue;
      }
      JSON.parse(Buffer.from(plan.upstream.body).toString('utf8'));
    }
  }
}
