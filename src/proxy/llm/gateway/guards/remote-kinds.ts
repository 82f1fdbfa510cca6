/**
 * Registers the remote guard kinds (webhook, providerAModeration, cloudAGuardrails, cloudCShield)
 * with compile.ts. Their blocks arrive lowered by the controller (policy/prompt-guard.ts): each
 * `policies` in BackendPolicy shape (Secrets resolved, durations in ms), a webhook's `backendRef`
 * as `backendKey` (its ready endpoints in the newest compiled config, in turn) plus the `url` of
 * its first ready endpoint (the fallback without such a config). A block still in its
 * written form (a `secretRef`, an unresolved `backendRef`) cannot be honoured: GuardConfigError,
 * so requests under it fail closed.
 *
 * The guards are compiled where the handler first meets a policy, with no runtime at hand, so
 * they share process-wide services: one credential source (token and assumed-role caches) and,
 * for tests, vendor origins pointing at local doubles.
 */
import { BackendCredentials } from '../../../policies/credentials/backend-credentials.ts';
import { SharedConnections } from '../../../ext/connections.ts';
import { GuardConfigError, registerGuardKind, type GuardSpecContext } from './compile.ts';
import { compileCloudAGuardrails, type CloudAGuardrailsGuardIR } from './cloud-a-guardrails.ts';
import { compileCloudCShield, type CloudCShieldGuardIR } from './cloud-c-shield.ts';
import { compileProviderAModeration, type ProviderAModerationGuardIR } from './provider-a-moderation.ts';
import type { GuardServices } from './remote.ts';
import type { CompiledGuard } from './types.ts';
import { compileWebhook, type WebhookGuardIR } from './webhook.ts';
import { resolveUrlEndpoint, RoundRobinTargets } from '../../../ext/endpoint.ts';
import type { PolicyEndpoint } from '../../../../ir/policy.ts';
import { isPublished, liveTargets } from '../../../policies/backend/service-targets.ts';

let services: GuardServices | undefined;

/** The services remote guards are compiled with (created on first use from the process environment). */
function guardServices(): GuardServices {
  // Webhook pools are shared by endpoint across config versions (held for the process: the guards have no config lifecycle).
  services ??= { credentials: new BackendCredentials(), connections: new SharedConnections() };
  return services;
}

/** Tests point the vendor guards at their doubles (and give them an environment); undefined: back to the process's own. */
export function setGuardServicesForTests(replacement: GuardServices | undefined): void {
  services = replacement;
}

/** A block the controller did not lower (written form): refused rather than sent without its credential. */
function requireLowered(spec: Readonly<Record<string, unknown>>, ctx: GuardSpecContext): void {
  const policies = spec.policies as Record<string, unknown> | undefined;
  const auth = policies?.auth as Record<string, unknown> | undefined;
  if (auth?.secretRef !== undefined || (auth?.cloudA as Record<string, unknown> | undefined)?.secretRef !== undefined || (auth?.cloudC as Record<string, unknown> | undefined)?.secretRef !== undefined) {
    throw new GuardConfigError(`promptGuard.${ctx.path}.policies.auth: the Secret reference was not resolved`);
  }
}

function registered(kind: string, compile: (spec: Readonly<Record<string, unknown>>, ctx: GuardSpecContext, s: GuardServices) => CompiledGuard): void {
  registerGuardKind(kind, (spec, ctx) => {
    requireLowered(spec, ctx);
    const common = { rejectStatus: ctx.rejectStatus, rejectMessage: ctx.rejectMessage };
    try {
      return compile(spec, { ...ctx, ...common }, guardServices());
    } catch (err) {
      if (err instanceof GuardConfigError) throw err;
      throw new GuardConfigError(`promptGuard.${ctx.path}: ${err instanceof Error ? err.message : String(err)}`, { cause: err });
    }
  });
}

registered('providerAModeration', (spec, ctx, s) => compileProviderAModeration(spec as ProviderAModerationGuardIR, ctx, s));
registered('cloudAGuardrails', (spec, ctx, s) => compileCloudAGuardrails(spec as unknown as CloudAGuardrailsGuardIR, ctx, s));
registered('cloudCShield', (spec, ctx, s) => compileCloudCShield(spec as unknown as CloudCShieldGuardIR, ctx, s));
registered('webhook', (spec, ctx, s) => {
  const url = typeof spec.url === 'string' ? spec.url : undefined;
  if (spec.backendKey === undefined && url === undefined) throw new GuardConfigError(`promptGuard.${ctx.path}.backendRef was not resolved to a backend`);
  // The runtime's resolver when there is one; else the backend's ready endpoints in the newest
  // compiled config (live: the guard is kept with its policy object across config versions); else
  // the address the controller resolved the backend to.
  const endpoints = s.endpoints ?? ((e: PolicyEndpoint) => {
    if (e.backendKey !== undefined && isPublished(e.backendKey)) return liveTargets(e.backendKey);
    if (url === undefined) throw new Error(`${String(spec.backendKey)} has no ready endpoint`);
    return new RoundRobinTargets([resolveUrlEndpoint({ url })]);
  });
  return compileWebhook({ ...(spec as WebhookGuardIR), backendKey: (spec.backendKey as string | undefined) ?? url }, ctx, { ...s, endpoints });
});
