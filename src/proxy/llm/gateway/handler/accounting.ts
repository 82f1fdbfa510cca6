/** Token usage of an answer: onto the attempt's span and GenAI metrics, the usage log and the policy context (rate limits). */
import type { RouteType } from '../../../../ir/ai.ts';
import type { PolicyContext } from '../../../policies/context.ts';
import type { ForwardPlan } from '../../translate/plan.ts';
import type { Usage } from '../../translate/usage.ts';
import type { Attempt, GatewayState } from './state.ts';

export function account(a: Attempt, usage: Usage | undefined, plan: ForwardPlan | undefined): void {
  if (!usage) return;
  a.span?.usage(usage);
  a.meter.usage(usage);
  logUsage(a.gw, a.provider.name, a.route, plan?.model, plan?.stream ?? false, usage, a.request.policy);
}

export function logUsage(gw: GatewayState, provider: string, route: RouteType, model: string | undefined, streaming: boolean, usage: Usage, policy: PolicyContext | undefined): void {
  // The log object is built only when it will be written (usage logs are info; benches run at warn).
  if (gw.logger.isLevelEnabled('info')) gw.logger.info({
    backend: gw.ir.key, 'llm.provider': provider, 'llm.route': route, 'llm.model': model, 'llm.streaming': streaming,
    'llm.inputTokens': usage.inputTokens, 'llm.outputTokens': usage.outputTokens, 'llm.totalTokens': usage.totalTokens,
    ...(usage.cachedInputTokens !== undefined ? { 'llm.cachedInputTokens': usage.cachedInputTokens } : {}),
    ...(usage.reasoningTokens !== undefined ? { 'llm.reasoningTokens': usage.reasoningTokens } : {}),
  }, 'llm usage');
  const ctx = policy as { reportUsage?: (u: { inputTokens: number; outputTokens: number; totalTokens: number }) => void } | undefined;
  ctx?.reportUsage?.({ inputTokens: usage.inputTokens, outputTokens: usage.outputTokens, totalTokens: usage.totalTokens });
}
