/**
 * `cloudCShield` (SPEC.md): cloud-C Model Armor. Requests go to the template's
 * `:sanitizeUserPrompt` (`{userPromptData: {text}}`), answers to `:sanitizeModelResponse`
 * (`{modelResponseData: {text}}`), at `modelarmor.<location>.rep.googleapis.com`
 * `/v1/projects/<projectId>/locations/<location>/templates/<templateId>`. The segments are sent as
 * one text (joined by blank lines: the API judges one prompt or one answer per call).
 * `filterMatchState: MATCH_FOUND` rejects; a result whose filters did not all run
 * (`invocationResult` other than SUCCESS) is no answer, so the guard fails closed.
 * Credentials: a cloud-C access token through the shared layer — `policies.auth.cloudC` (a Secret's
 * service account), else the ambient credentials (GOOGLE_APPLICATION_CREDENTIALS, metadata server).
 */
import type { BackendAuthPolicy } from '../../../../ir/policy.ts';
import { PLAIN_BACKEND } from '../../../policies/credentials/backend-credentials.ts';
import type { CompiledGuard, GuardInput, GuardVerdict } from './types.ts';
import { GuardClient, GuardServiceError, isRecord, vendorTarget, type GuardCommon, type GuardPolicies, type GuardServices } from './remote.ts';

export const DEFAULT_SHIELD_LOCATION = 'us-central1';

/** The IR entry member (`cloudCShield`), its policies lowered by the controller. */
export interface CloudCShieldGuardIR {
  readonly templateId: string;
  readonly projectId: string;
  readonly location?: string;
  readonly policies?: GuardPolicies;
}

export const modelArmorHost = (location: string): string => `modelarmor.${location}.rep.googleapis.com`;
export const templatePath = (c: { projectId: string; location: string; templateId: string }): string =>
  `/v1/projects/${encodeURIComponent(c.projectId)}/locations/${encodeURIComponent(c.location)}/templates/${encodeURIComponent(c.templateId)}`;

/** With no `policies.auth`, a cloud-C token from the ambient credentials (Model Armor takes nothing else). */
const AMBIENT_CLOUD_C: BackendAuthPolicy = Object.freeze({ cloudC: {} });

export function compileCloudCShield(config: CloudCShieldGuardIR, common: GuardCommon, services: GuardServices): CompiledGuard {
  const location = config.location ?? DEFAULT_SHIELD_LOCATION;
  const base = templatePath({ projectId: config.projectId, location, templateId: config.templateId });
  const policies: GuardPolicies = { ...config.policies, auth: config.policies?.auth ?? AMBIENT_CLOUD_C };
  const client = new GuardClient('cloudCShield', vendorTarget('cloudCShield', modelArmorHost(location), services), policies, PLAIN_BACKEND, services);
  return {
    kind: 'cloudCShield',
    rejectStatus: common.rejectStatus,
    rejectMessage: common.rejectMessage,
    failOpen: false,
    async check(input: GuardInput, signal: AbortSignal): Promise<GuardVerdict> {
      const text = input.segments.map((s) => s.text).filter((t) => t !== '').join('\n\n');
      if (text === '') return { action: 'pass' };
      const answer = input.phase === 'request'
        ? await client.post(`${base}:sanitizeUserPrompt`, { userPromptData: { text } }, signal)
        : await client.post(`${base}:sanitizeModelResponse`, { modelResponseData: { text } }, signal);
      return verdictOf(answer);
    },
  };
}

/** The filters that matched (`…FilterResult.matchState: MATCH_FOUND`), for the reason. */
function matchedFilters(filterResults: unknown): string[] {
  if (!isRecord(filterResults)) return [];
  const matched: string[] = [];
  for (const [name, result] of Object.entries(filterResults)) {
    if (JSON.stringify(result).includes('"MATCH_FOUND"')) matched.push(name);
  }
  return matched;
}

function verdictOf(answer: unknown): GuardVerdict {
  const result = isRecord(answer) ? answer.sanitizationResult : undefined;
  if (!isRecord(result) || (result.filterMatchState !== 'MATCH_FOUND' && result.filterMatchState !== 'NO_MATCH_FOUND')) {
    throw new GuardServiceError('cloudCShield answered without sanitizationResult.filterMatchState');
  }
  if (result.filterMatchState === 'MATCH_FOUND') {
    const filters = matchedFilters(result.filterResults);
    return { action: 'reject', reason: `Model Armor match${filters.length > 0 ? `: ${filters.join(', ')}` : ''}` };
  }
  if (result.invocationResult !== undefined && result.invocationResult !== 'SUCCESS') {
    throw new GuardServiceError(`cloudCShield: the template's filters did not all run (invocationResult ${String(result.invocationResult)})`);
  }
  return { action: 'pass' };
}
