/**
 * `providerAModeration` (SPEC.md PromptguardRequest): OpenAI's moderation endpoint. Every text
 * segment of the request is one item of `input`; a result with `flagged: true` rejects. Reached at
 * api.openai.com through the guard's `policies` (tcp, tls, http, tunnel; `auth` key or secretRef,
 * at `location`, default Authorization Bearer). Request guards only (SPEC.md has no response variant).
 */
import { PLAIN_BACKEND } from '../../../policies/credentials/backend-credentials.ts';
import type { CompiledGuard, GuardInput, GuardVerdict } from './types.ts';
import { GuardClient, GuardServiceError, isRecord, vendorTarget, type GuardCommon, type GuardPolicies, type GuardServices } from './remote.ts';

export const DEFAULT_MODERATION_MODEL = 'omni-moderation-latest';
export const MODERATION_HOST = 'api.openai.com';
export const MODERATION_PATH = '/v1/moderations';

/** The IR entry member (`providerAModeration`), its policies lowered by the controller. */
export interface ProviderAModerationGuardIR {
  readonly model?: string;
  readonly policies?: GuardPolicies;
}

/** The request OpenAI's moderation endpoint takes (text inputs). */
export interface ModerationRequest {
  readonly model: string;
  readonly input: readonly string[];
}

export function compileProviderAModeration(config: ProviderAModerationGuardIR, common: GuardCommon, services: GuardServices): CompiledGuard {
  const model = config.model ?? DEFAULT_MODERATION_MODEL;
  const client = new GuardClient('providerAModeration', vendorTarget('providerAModeration', MODERATION_HOST, services), config.policies, PLAIN_BACKEND, services);
  return {
    kind: 'providerAModeration',
    rejectStatus: common.rejectStatus,
    rejectMessage: common.rejectMessage,
    failOpen: false,
    async check(input: GuardInput, signal: AbortSignal): Promise<GuardVerdict> {
      const texts = input.segments.map((s) => s.text).filter((t) => t !== '');
      if (texts.length === 0) return { action: 'pass' };
      const request: ModerationRequest = { model, input: texts };
      return verdictOf(await client.post(MODERATION_PATH, request, signal));
    },
  };
}

/** `results[].flagged` decides; the flagged categories are the reason. */
function verdictOf(answer: unknown): GuardVerdict {
  const results = isRecord(answer) ? answer.results : undefined;
  if (!Array.isArray(results) || results.length === 0 || !results.every((r) => isRecord(r) && typeof r.flagged === 'boolean')) {
    throw new GuardServiceError('providerAModeration answered without results[].flagged');
  }
  const flagged = (results as Record<string, unknown>[]).filter((r) => r.flagged === true);
  if (flagged.length === 0) return { action: 'pass' };
  const categories = new Set<string>();
  for (const r of flagged) {
    if (isRecord(r.categories)) for (const [name, on] of Object.entries(r.categories)) if (on === true) categories.add(name);
  }
  return { action: 'reject', reason: `flagged by moderation${categories.size > 0 ? `: ${[...categories].join(', ')}` : ''}` };
}
