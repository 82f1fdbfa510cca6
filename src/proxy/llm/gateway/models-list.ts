/**
 * `/v1/models` on a plain `ai` backend (no ProxyModels): the answer is the union of the models of
 * every provider in the chosen provider's priority group (each provider's pinned model and its
 * aliases; translate/models.ts), so two calls answer the same list whichever provider of the group
 * the rotation picked (docs/llm.md). Only `Models` requests call this.
 */
import type { AiBackendIR, AiProviderIR, LLMProvider } from '../../../ir/ai.ts';
import type { BackendPolicy } from '../../../ir/policy.ts';
import { subBackendPolicy } from '../../policies/backend/sub-backend.ts';

export type ModelsGroup = readonly { readonly provider: LLMProvider; readonly modelAliases?: Readonly<Record<string, string>> }[];

/** The group holding `chosen` (by identity), each provider with the aliases of its effective policy. */
export function modelsGroupOf(ir: AiBackendIR, backendPolicy: BackendPolicy | undefined, chosen: AiProviderIR): ModelsGroup {
  const group = ir.groups.find((g) => g.providers.includes(chosen))?.providers ?? [chosen];
  return group.map((p) => {
    const aliases = (subBackendPolicy(backendPolicy, p.name, p.policies)?.ai ?? ir.policy)?.modelAliases;
    return aliases ? { provider: p.provider, modelAliases: aliases } : { provider: p.provider };
  });
}
