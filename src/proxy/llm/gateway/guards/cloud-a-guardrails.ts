/**
 * `cloudAGuardrails` (SPEC.md): cloud-A Bedrock's ApplyGuardrail API
 * (`POST /guardrail/<identifier>/version/<version>/apply` on bedrock-runtime.<region>.amazonaws.com).
 * Each text segment is one content block; `source` is INPUT for requests and OUTPUT for answers.
 * `action: NONE` passes. `GUARDRAIL_INTERVENED` rejects when any policy BLOCKED (or intervened in a
 * way that names no anonymization); when the only interventions are ANONYMIZED sensitive
 * information, the vendor's `outputs` (one per content block) are the masked text.
 * Credentials through the shared layer: SigV4 for service `bedrock` in `region` with the default
 * chain unless `policies.auth` names `cloudA` (Secret keys, assumed role) or a `key`/`secretRef`
 * (a Bedrock API key, sent as a bearer token instead of signing).
 */
import type { CredentialDefaults } from '../../../policies/credentials/backend-credentials.ts';
import type { CompiledGuard, GuardInput, GuardVerdict } from './types.ts';
import { GuardClient, GuardServiceError, isRecord, vendorTarget, type GuardCommon, type GuardPolicies, type GuardServices } from './remote.ts';

/** The IR entry member (`cloudAGuardrails`), its policies lowered by the controller. */
export interface CloudAGuardrailsGuardIR {
  readonly identifier: string;
  readonly version: string;
  readonly region: string;
  readonly policies?: GuardPolicies;
}

/** The ApplyGuardrail request body. */
export interface ApplyGuardrailRequest {
  readonly source: 'INPUT' | 'OUTPUT';
  readonly content: readonly { readonly text: { readonly text: string } }[];
}

export const applyGuardrailHost = (region: string): string => `bedrock-runtime.${region}.amazonaws.com`;
export const applyGuardrailPath = (identifier: string, version: string): string =>
  `/guardrail/${encodeURIComponent(identifier)}/version/${encodeURIComponent(version)}/apply`;

export function compileCloudAGuardrails(config: CloudAGuardrailsGuardIR, common: GuardCommon, services: GuardServices): CompiledGuard {
  const path = applyGuardrailPath(config.identifier, config.version);
  const defaults: CredentialDefaults = { sigv4: { service: 'bedrock', region: config.region }, signedHeaders: 'all' };
  const client = new GuardClient('cloudAGuardrails', vendorTarget('cloudAGuardrails', applyGuardrailHost(config.region), services), config.policies, defaults, services);
  return {
    kind: 'cloudAGuardrails',
    rejectStatus: common.rejectStatus,
    rejectMessage: common.rejectMessage,
    failOpen: false,
    async check(input: GuardInput, signal: AbortSignal): Promise<GuardVerdict> {
      // Empty blocks are refused by the API (text length 1..): they are left out and kept as they are.
      const sent = input.segments.map((s, i) => ({ i, text: s.text })).filter((s) => s.text !== '');
      if (sent.length === 0) return { action: 'pass' };
      const request: ApplyGuardrailRequest = { source: input.phase === 'request' ? 'INPUT' : 'OUTPUT', content: sent.map((s) => ({ text: { text: s.text } })) };
      const answer = await client.post(path, request, signal);
      const verdict = verdictOf(answer, sent.length);
      if (verdict.action !== 'mask') return verdict;
      const masked = input.segments.map((s) => s.text);
      sent.forEach((s, k) => { masked[s.i] = verdict.segments[k]!; });
      return { action: 'mask', segments: masked };
    },
  };
}

/** Assessment entries (topics, filters, words, PII, regexes …) with their `action`, flattened. */
function interventions(assessments: unknown): string[] {
  const actions: string[] = [];
  const walk = (value: unknown, depth: number): void => {
    if (depth > 6) return;
    if (Array.isArray(value)) for (const v of value) walk(v, depth + 1);
    else if (isRecord(value)) {
      if (typeof value.action === 'string' && (value.detected === undefined || value.detected === true)) actions.push(value.action);
      for (const [key, v] of Object.entries(value)) if (key !== 'invocationMetrics' && typeof v === 'object') walk(v, depth + 1);
    }
  };
  walk(assessments, 0);
  return actions;
}

function verdictOf(answer: unknown, blocks: number): GuardVerdict {
  if (!isRecord(answer) || (answer.action !== 'NONE' && answer.action !== 'GUARDRAIL_INTERVENED')) {
    throw new GuardServiceError('cloudAGuardrails answered without action NONE or GUARDRAIL_INTERVENED');
  }
  if (answer.action === 'NONE') return { action: 'pass' };
  const reason = typeof answer.actionReason === 'string' ? answer.actionReason : 'guardrail intervened';
  const taken = interventions(answer.assessments).filter((a) => a !== 'NONE');
  // Only anonymization: the vendor masked the text. Anything else (BLOCKED, or no named action) rejects.
  if (taken.length === 0 || !taken.every((a) => a === 'ANONYMIZED')) return { action: 'reject', reason };
  const outputs = answer.outputs;
  if (!Array.isArray(outputs) || outputs.length !== blocks || !outputs.every((o) => isRecord(o) && typeof o.text === 'string')) {
    throw new GuardServiceError(`cloudAGuardrails anonymized but answered ${Array.isArray(outputs) ? outputs.length : 'no'} outputs for ${blocks} content blocks`);
  }
  return { action: 'mask', segments: outputs.map((o) => (o as { text: string }).text) };
}
